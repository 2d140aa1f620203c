/**
 * The family and version in a Claude model name, in Anthropic's, Bedrock's and Vertex's spellings
 * (`claude-opus-4-5-20251101`, `anthropic.claude-haiku-4-5-20251001-v1:0`,
 * `claude-sonnet-4-5@20250929`, `claude-opus-4.5`), for the rules that decide per model what a
 * request may carry (structured outputs, effort).
 */

export interface ClaudeVersion {
  family: 'opus' | 'sonnet' | 'haiku';
  major: number;
  /** 0 when the name has none (`claude-opus-4-20250514` is Opus 4). */
  minor: number;
}

/** `claude-<family>-<major>[-<minor>]`, the minor one or two digits (not a date like `-20250514`). */
const MODEL = /claude-(opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2}))?(?!\d)/i;

/** The version a name carries, or undefined (3.x names put the version first and are not read). */
export function claudeVersion(model: string): ClaudeVersion | undefined {
  const m = MODEL.exec(model);
  if (!m) return undefined;
  return {
    family: m[1].toLowerCase() as ClaudeVersion['family'],
    major: Number(m[2]),
    minor: Number(m[3] ?? 0),
  };
}

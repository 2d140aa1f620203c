/**
 * The family and version in a Claude model name, in Anthropic's, Bedrock's and Vertex's spellings
 * (`claude-opus-4-5-20251101`, `anthropic.claude-haiku-4-5-20251001-v1:0`,
 * `claude-sonnet-4-5@20250929`, `claude-opus-4.5`), for the rules that decide per model what a
 * request may carry (structured outputs, effort, thinking).
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

/**
 * Claude models from before extended thinking (3.7 Sonnet brought it): Claude 2 and Instant, 3
 * Opus, Sonnet and Haiku, 3.5 Sonnet and Haiku, in every provider's spelling. They answer a
 * `thinking` with 400 "'claude-3-5-haiku-20241022' does not support thinking.".
 */
const BEFORE_THINKING = /claude-(?:instant|2\b|3[.-](?:opus|sonnet|haiku)|3[.-]5[.-](?:sonnet|haiku))/i;

/**
 * Whether the model takes `thinking`: every Claude but those before 3.7 Sonnet (a name the rule
 * does not know is taken to think). The channel setting `thinking: true|false` overrides it (a
 * proxy's own model names).
 */
export function takesThinking(model: string, extra?: Record<string, unknown>): boolean {
  if (typeof extra?.thinking === 'boolean') return extra.thinking;
  return !BEFORE_THINKING.test(model);
}

/**
 * Whether the model thinks only adaptively: Opus 4.7 and later Opus 4.x, and every 5.x model. They
 * answer `thinking: {type: "enabled", budget_tokens}` with 400 "\"thinking.type.enabled\" is not
 * supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to
 * control thinking behavior.", and show their thinking only when asked (`display: "summarized"`;
 * their default is "omitted"). Opus and Sonnet 4.6 take both kinds; older models only budgets.
 * The channel setting `adaptiveThinking: true|false` overrides the name rule.
 */
export function thinksAdaptively(model: string, extra?: Record<string, unknown>): boolean {
  if (typeof extra?.adaptiveThinking === 'boolean') return extra.adaptiveThinking;
  const v = claudeVersion(model);
  return v !== undefined && (v.major > 4 || (v.major === 4 && v.family === 'opus' && v.minor >= 7));
}

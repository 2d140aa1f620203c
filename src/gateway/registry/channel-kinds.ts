/**
 * Upstream kinds a channel may have, as data: the base URL used when none is given, and the
 * author namespace of the registry whose models a native channel of that kind serves without
 * listing them (an Anthropic key serves `anthropic/*`). Wire formats live in src/providers/.
 */
export const CHANNEL_KINDS = [
  'openai-compatible',
  'anthropic',
  'gemini',
  'voyage',
  'jina',
  'cohere',
] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

interface KindInfo {
  baseUrl: string;
  /** Registry author served by default; openai-compatible only when pointed at OpenAI itself. */
  author: string;
  /**
   * The base URL ends in the API version and request paths are appended to it as given
   * (`{base}/chat/completions`), so one without it answers 404: a setup hint names the fix.
   */
  versionInBaseUrl?: true;
}

const KINDS: Record<ChannelKind, KindInfo> = {
  'openai-compatible': { baseUrl: 'https://api.openai.com/v1', author: 'openai', versionInBaseUrl: true },
  anthropic: { baseUrl: 'https://api.anthropic.com', author: 'anthropic' },
  gemini: { baseUrl: 'https://generativelanguage.googleapis.com', author: 'google' },
  voyage: { baseUrl: 'https://api.voyageai.com/v1', author: 'voyageai' },
  jina: { baseUrl: 'https://api.jina.ai/v1', author: 'jinaai' },
  cohere: { baseUrl: 'https://api.cohere.com', author: 'cohere' },
};

export function isChannelKind(kind: string): kind is ChannelKind {
  return Object.hasOwn(KINDS, kind);
}

export function defaultBaseUrl(kind: ChannelKind): string {
  return KINDS[kind].baseUrl;
}

/**
 * The registry author whose models this channel serves natively, or undefined. An
 * OpenAI-compatible channel at another address (vLLM, OpenRouter, ...) serves only what it
 * lists or what its `/models` returns.
 */
export function nativeAuthor(kind: string, baseUrl: string): string | undefined {
  if (!isChannelKind(kind)) return undefined;
  const info = KINDS[kind];
  if (kind === 'openai-compatible' && sameOrigin(baseUrl, info.baseUrl) === false) return undefined;
  return info.author;
}

/** Whether a channel of `kind` needs the API version (`/v1`) at the end of its base URL. */
export function needsVersionInBaseUrl(kind: string): boolean {
  return isChannelKind(kind) && KINDS[kind].versionInBaseUrl === true;
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).host === new URL(b).host;
  } catch {
    return false;
  }
}

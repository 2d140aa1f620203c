import type { ChatRequest } from './types.js';

/**
 * The completion length an upstream is sent: what the client asked (`max_completion_tokens` wins
 * over `max_tokens`), at most the model's output limit (the registry's `max_completion_tokens`)
 * when known. OpenAI, Anthropic and Gemini answer a larger one with a 400, and no answer can be
 * longer than the limit anyway. Undefined when the client asked none. The adapters send this, and
 * the route plan reserves it (quota hold, middle-out's room for the answer).
 */
export function sentMaxTokens(req: ChatRequest, limit: number | null | undefined): number | undefined {
  const asked = req.max_completion_tokens ?? req.max_tokens;
  return asked === undefined || limit == null ? asked : Math.min(asked, limit);
}

/**
 * The answer length sent when the client asks none, by upstreams that must send one (Anthropic
 * requires `max_tokens`; `settings.defaultMaxTokens` overrides it per channel).
 */
export const DEFAULT_ANSWER_TOKENS = 4096;

/**
 * The room middle-out keeps free for the answer on `t`: the length sent when the client asked
 * one. Without one an answer still needs room: Anthropic is sent its default length (capped at
 * the model's limit), which with the prompt must fit the context (400 "input length and
 * `max_tokens` exceed context limit"), and other upstreams answer in what the prompt leaves, so
 * they keep the same default, at most a quarter of a small model's context.
 */
export function answerRoom(
  req: ChatRequest,
  t: {
    kind: string;
    contextLength: number;
    maxCompletionTokens: number | null;
    settings: Record<string, unknown>;
  },
): number {
  const sent = sentMaxTokens(req, t.maxCompletionTokens);
  if (sent !== undefined) return sent;
  // `defaultMaxTokens` is what the Anthropic adapter sends; other kinds send nothing.
  const d = t.kind === 'anthropic' ? t.settings.defaultMaxTokens : undefined;
  const room = Math.min(
    typeof d === 'number' ? d : DEFAULT_ANSWER_TOKENS,
    t.maxCompletionTokens ?? Number.POSITIVE_INFINITY,
  );
  return t.kind === 'anthropic' ? room : Math.min(room, Math.floor(t.contextLength / 4));
}

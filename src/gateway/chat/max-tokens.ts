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

/** The room kept for an answer no one bounded (no max_tokens, none sent by default). */
const UNBOUNDED_ANSWER_ROOM = 4096;

/**
 * The room middle-out keeps free for the answer on `t`: the max_tokens sent (`sent`: the
 * client's, or the adapter's own: Anthropic's, sent when the client asked none or raised to hold
 * a thinking budget, must fit beside the prompt, or it answers 400 "input length and
 * `max_tokens` exceed context limit"). Without one the upstream answers in what the prompt
 * leaves, which is kept at 4,096, at most the model's limit and a quarter of a small model's
 * context.
 */
export function answerRoom(
  t: { contextLength: number; maxCompletionTokens: number | null },
  sent: number | undefined,
): number {
  if (sent !== undefined) return sent;
  return Math.min(
    UNBOUNDED_ANSWER_ROOM,
    t.maxCompletionTokens ?? UNBOUNDED_ANSWER_ROOM,
    Math.floor(t.contextLength / 4),
  );
}

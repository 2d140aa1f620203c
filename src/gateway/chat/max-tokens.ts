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

import type { ChatRequest } from '../../gateway/chat/types.js';
import type { UpstreamTarget } from '../types.js';

/**
 * The completion length to send: what the client asked (`max_completion_tokens` wins over
 * `max_tokens`), at most the model's output limit when the registry knows it
 * (`target.maxOutputTokens`). OpenAI, Anthropic and Gemini all answer a larger one with a 400,
 * and no answer can be longer than the limit anyway. Undefined when the client asked none.
 */
export function sentMaxTokens(req: ChatRequest, target: UpstreamTarget): number | undefined {
  const asked = req.max_completion_tokens ?? req.max_tokens;
  const limit = target.maxOutputTokens;
  return asked !== undefined && limit !== undefined ? Math.min(asked, limit) : asked;
}

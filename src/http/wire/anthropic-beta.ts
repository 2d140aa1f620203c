import { setHidden } from '../../gateway/chat/hidden.js';
import type { ChatRequest } from '../../gateway/chat/types.js';

/**
 * The values of an `anthropic-beta` header (a comma list; Node joins repeated headers with ", "),
 * trimmed, in order, without duplicates or empty ones. Also OpenRouter's `x-anthropic-beta`.
 */
export function anthropicBetas(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const out: string[] = [];
  for (const h of Array.isArray(header) ? header : [header])
    for (const v of h.split(',')) {
      const b = v.trim();
      if (b !== '' && !out.includes(b)) out.push(b);
    }
  return out;
}

/**
 * OpenRouter's `x-anthropic-beta` request header on the OpenAI-shaped ingresses
 * (`/v1/chat/completions`, `/v1/responses`): its values ride hidden (`anthropic_beta`) on the chat
 * request, as the Anthropic ingress's `anthropic-beta` values do, so an Anthropic upstream gets
 * them under its channel's `client_betas` allow-list and no other upstream gets them.
 *
 * Only the header says it: a top-level `anthropic_beta` in a chat body is the client's field,
 * replaced here by the header's values when there is one, and dropped with the other hidden
 * names otherwise (`dropClientHidden`, in the chat pipeline). A request without the header costs
 * no property definition.
 */
export function withClientBetas(req: ChatRequest, header: string | string[] | undefined): ChatRequest {
  const betas = anthropicBetas(header);
  if (betas.length > 0) setHidden(req, 'anthropic_beta', betas);
  return req;
}

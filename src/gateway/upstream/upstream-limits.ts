import type { Config } from '../../config/schema.js';
import type { BodyLimits } from './upstream-client.js';

/**
 * The configured size limits of upstream answers for chat calls, model listings and channel
 * tests (embeddings take `max_embedding_response_bytes` for their answers instead).
 */
export function upstreamLimits(g: Config['gateway']): BodyLimits {
  return {
    maxBodyBytes: g.max_response_bytes,
    maxErrorBodyBytes: g.max_error_body_bytes,
    maxEventBytes: g.max_stream_event_bytes,
  };
}

/**
 * Gateway errors in Anthropic's shape (`{type: "error", error: {type, message}, request_id}`,
 * reference/providers.md §2.7): the body of a failed `/v1/messages` (error-handler.ts, surface
 * `anthropic`) and the `error` event that ends a failed stream, as Anthropic sends it. The error
 * type follows the status, which is what the SDKs pick their error class by.
 */
import type { GatewayError } from '../../gateway/errors.js';

/** Anthropic's error type for a gateway status (the SDKs pick their error class by status). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function anthropicErrorBody(e: GatewayError, requestId: string | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'error',
    error: { type: anthropicErrorType(e.status), message: e.message },
  };
  if (requestId) body.request_id = requestId;
  return body;
}

export function anthropicErrorEvent(e: GatewayError, requestId: string | undefined): string {
  const body = anthropicErrorBody(e, requestId);
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}

import type { UpstreamHeaders } from '../types.js';

function header(headers: UpstreamHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Milliseconds an upstream asked us to wait: `retry-after-ms` (OpenAI), then `retry-after` as
 * delta-seconds or an HTTP date (RFC 9110). Undefined when absent or unparseable.
 */
export function parseRetryAfter(headers: UpstreamHeaders, now: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const ra = header(headers, 'retry-after')?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Math.ceil(Number(ra) * 1000);
  const at = Date.parse(ra);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Google's RetryInfo detail carries a protobuf duration such as "37s" or "1.5s". */
export function parseDurationMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return m ? Math.ceil(Number(m[1]) * 1000) : undefined;
}

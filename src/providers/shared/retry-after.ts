import type { UpstreamHeaders } from '../types.js';

function header(headers: UpstreamHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A non-negative decimal number: delta-seconds (RFC 9110 says digits; a fraction is tolerated). */
const NUMBER = /^\d+(\.\d+)?$/;
/**
 * An HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the obsolete RFC 850 and
 * asctime forms all begin with the day's name. Date.parse alone takes almost anything ("1",
 * "-5", "soon 2"), which would turn garbage into a date in the past, read as "retry now".
 */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /i;

/**
 * Milliseconds an upstream asked us to wait: `retry-after-ms` (OpenAI), then `retry-after` as
 * delta-seconds or an HTTP date (RFC 9110; a date already past is 0). Undefined when absent or
 * unparseable (negative, garbage): such a header is ignored, as if absent. 0 stays 0 here; what a
 * client is told is at least 1 second (`GatewayError.retryAfter`), and the gateway's own retry
 * still backs off (docs/routing.md, "Retry-After").
 */
export function parseRetryAfter(headers: UpstreamHeaders, now: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms')?.trim();
  if (ms !== undefined && NUMBER.test(ms)) return Math.ceil(Number(ms));
  const ra = header(headers, 'retry-after')?.trim();
  if (!ra) return undefined;
  if (NUMBER.test(ra)) return Math.ceil(Number(ra) * 1000);
  if (!HTTP_DATE.test(ra)) return undefined;
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

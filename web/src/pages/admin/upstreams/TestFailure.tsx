/**
 * A channel test's verdict as the Upstreams page shows it: one line by the Test button, and for a
 * failure, a row under the channel with what was tried, how it failed and what to check. A
 * failed Refresh of its model list, and a test refused before any upstream was tried, show in
 * the same panel.
 */
import { ApiError, errorText } from '../../../api';
import type { Channel, ChannelTestResult } from '../../../types';

/** What to check for each kind of failure a channel test answers (`error_kind`). */
const FAILURE_HINTS: Record<string, string> = {
  auth: 'The upstream refused the key: check the upstream keys.',
  payment: 'The provider refused the account (credit, billing or region): check it with the provider.',
  not_found:
    'The upstream does not know the model or the address: check the model name (or its mapping) and the base URL.',
  connection:
    'The gateway could not connect: check the base URL, and that the server is up and reachable from the gateway.',
  timeout: 'The upstream did not answer in time: check that the server is up, or the base URL.',
  rate_limited: "The upstream's rate limit was reached: try again later, or add keys.",
  overloaded: 'The upstream is overloaded: try again later.',
  server_error: 'The upstream failed on its side: try again later, or read its logs.',
  bad_response: "The answer was not in this upstream kind's format: check the kind and the base URL.",
  bad_request:
    'The upstream refused the request: check the model name and the settings sent with it (extra headers, options).',
  context_length: 'The model refused the test prompt as too long.',
  content_filter: "The provider's safety filter refused the test prompt.",
  too_large: 'The upstream refused the request as too large.',
};

/** A test's (or a refresh's) outcome: the API's verdict, or a failure made one (`asFailure`). */
export interface TestState {
  busy: boolean;
  result?: ChannelTestResult;
  error?: string;
}

/** What the console says when a channel serves no models because its list could not be read. */
export const NO_MODELS =
  'This upstream serves no models: its model list could not be read. Fix the base URL or the keys (Edit), then press Refresh in its Models column; or name its models in Edit.';

/** The error kind an upstream status stands for, as the API's test answers it. */
function kindOfStatus(status: number): string | null {
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'payment';
  if (status === 404) return 'not_found';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate_limited';
  if (status === 529 || status === 503) return 'overloaded';
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'bad_request';
  return null;
}

/**
 * A refused Test or Refresh call as a failed verdict, for the panel: the API answers those with
 * its error envelope (`upstream failed: <base url> answered 500: ...`, or a 400 for a channel
 * that serves no models), not with the test's fields, so what they say is read from the message.
 */
export function asFailure(err: unknown): ChannelTestResult {
  const text = errorText(err);
  if (
    err instanceof ApiError &&
    err.status === 400 &&
    /^channel serves no models: its model list/.test(err.message)
  )
    return { success: false, error_kind: null, upstream_status: null, message: NO_MODELS };
  const message = text.replace(/^upstream (failed|timed out): /, '');
  const answered = /\banswered (\d{3}):/.exec(message);
  const status = answered ? Number(answered[1]) : null;
  let kind: string | null = status !== null ? kindOfStatus(status) : null;
  if (/connection failed|ECONNREFUSED|ENOTFOUND|ECONNRESET|EHOSTUNREACH/i.test(message)) kind = 'connection';
  else if (err instanceof ApiError && err.status === 504) kind = 'timeout';
  else if (kind === null && err instanceof ApiError && err.status === 502) kind = 'bad_response';
  return { success: false, error_kind: kind, upstream_status: status, message };
}

/** The one-line verdict, announced where the Test button is. */
export function testSummary(t: TestState): string {
  if (t.busy) return 'Testing…';
  if (t.error !== undefined) return `Could not test: ${t.error}`;
  const r = t.result;
  if (!r) return '';
  const parts = [r.success ? 'Works' : 'Failed'];
  if (r.model) parts.push(`with ${r.model}`);
  if (typeof r.latency_ms === 'number') parts.push(`${r.success ? 'in' : 'after'} ${r.latency_ms} ms`);
  if (r.success) return parts.join(' ') + (r.message ? `: ${r.message}` : '');
  const why = [
    typeof r.upstream_status === 'number' ? `HTTP ${r.upstream_status}` : null,
    r.error_kind ?? null,
  ].filter(Boolean);
  return `${parts.join(' ')}${why.length ? ` (${why.join(', ')})` : ''}. Details below.`;
}

/** What a failed test (or refresh of the model list) tried and how it failed, laid out to act on. */
export function TestFailure({
  c,
  r,
  action = 'Test',
}: {
  c: Channel;
  r: ChannelTestResult;
  action?: 'Test' | 'Refresh';
}) {
  const hint = r.error_kind ? FAILURE_HINTS[r.error_kind] : undefined;
  const sentAs = r.upstream_model && r.upstream_model !== r.model ? r.upstream_model : null;
  const what = action === 'Test' ? 'Test' : 'Refresh of the model list';
  return (
    <section className="test-failure" aria-label={`${what} of ${c.name} failed`}>
      <p className="test-failure-head">
        <span className="badge badge-error">✗ {what} failed</span>
        {hint && <span> {hint}</span>}
      </p>
      <dl className="facts">
        <dt>Upstream status</dt>
        <dd>
          {typeof r.upstream_status === 'number'
            ? `HTTP ${r.upstream_status}`
            : 'None: the upstream did not answer'}
        </dd>
        <dt>Error kind</dt>
        <dd>{r.error_kind ? <code>{r.error_kind}</code> : 'Not an upstream failure'}</dd>
        {r.model && (
          <>
            <dt>Model tried</dt>
            <dd>
              {r.model}
              {sentAs && (
                <>
                  {' '}
                  (sent as <code>{sentAs}</code>)
                </>
              )}
              {r.endpoint && `, ${r.endpoint === 'embeddings' ? 'an embedding' : 'a chat'} request`}
            </dd>
          </>
        )}
        {typeof r.latency_ms === 'number' && (
          <>
            <dt>Latency</dt>
            <dd>{r.latency_ms} ms</dd>
          </>
        )}
        <dt>Message</dt>
        <dd>{r.message || 'None given'}</dd>
      </dl>
    </section>
  );
}

/**
 * A channel test's verdict as the Upstreams page shows it: one line by the Test button, and for a
 * failure, a row under the channel with what was tried, how it failed and what to check. A
 * failed Refresh of its model list, and a test refused before any upstream was tried, show in
 * the same panel.
 */
import { ApiError, errorText } from '../../../api';
import type { Channel, ChannelListing, ChannelTestResult } from '../../../types';

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
  empty:
    'The upstream listed no models; the models it listed before are still served. Refresh to clear them if the upstream really serves none.',
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

/** A listing's outcome (`GET /api/channel`'s `listing`, a failed refresh's data), if `v` is one. */
export function asListing(v: unknown): ChannelListing | null {
  return v && typeof v === 'object' && typeof (v as ChannelListing).ok === 'boolean'
    ? (v as ChannelListing)
    : null;
}

/**
 * A refused Test or Refresh call as a failed verdict, for the panel. A failed Refresh carries the
 * listing's outcome in its data (the error kind, the upstream status, the message), read as it
 * is; a test refused for a channel serving no models is said in console words; any other
 * refusal (a deleted channel, the gateway unreachable) is its message, with no upstream kind.
 */
export function asFailure(err: unknown): ChannelTestResult {
  const listing = err instanceof ApiError ? asListing(err.data) : null;
  if (listing && !listing.ok)
    return {
      success: false,
      error_kind: listing.error_kind,
      upstream_status: listing.upstream_status,
      message: listing.message ?? errorText(err),
    };
  if (
    err instanceof ApiError &&
    err.status === 400 &&
    /^channel serves no models: its model list/.test(err.message)
  )
    return { success: false, error_kind: null, upstream_status: null, message: NO_MODELS };
  return { success: false, error_kind: null, upstream_status: null, message: errorText(err) };
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

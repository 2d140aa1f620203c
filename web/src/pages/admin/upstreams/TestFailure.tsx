/**
 * A channel test's verdict as the Upstreams page shows it: one line by the Test button, and for a
 * failure, a row under the channel with what was tried, how it failed and what to check.
 */
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

/** A test's outcome: the API's verdict, or the call refused before any upstream was tried. */
export interface TestState {
  busy: boolean;
  result?: ChannelTestResult;
  error?: string;
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

/** What a failed test tried and how it failed, laid out to act on. */
export function TestFailure({ c, r }: { c: Channel; r: ChannelTestResult }) {
  const hint = r.error_kind ? FAILURE_HINTS[r.error_kind] : undefined;
  const sentAs = r.upstream_model && r.upstream_model !== r.model ? r.upstream_model : null;
  return (
    <section className="test-failure" aria-label={`Test of ${c.name} failed`}>
      <p className="test-failure-head">
        <span className="badge badge-error">✗ Test failed</span>
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
        <dt>Model tried</dt>
        <dd>
          {r.model ?? 'unknown'}
          {sentAs && (
            <>
              {' '}
              (sent as <code>{sentAs}</code>)
            </>
          )}
          {r.endpoint && `, ${r.endpoint === 'embeddings' ? 'an embedding' : 'a chat'} request`}
        </dd>
        <dt>Latency</dt>
        <dd>{typeof r.latency_ms === 'number' ? `${r.latency_ms} ms` : 'unknown'}</dd>
        <dt>Message</dt>
        <dd>{r.message || 'None given'}</dd>
      </dl>
    </section>
  );
}

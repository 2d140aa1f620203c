import { Fragment, useState } from 'react';
import { ApiError, api, errorText } from '../../api';
import { type FieldSpec, type FormValues, numOrNull, SpecForm, str } from '../../components/SpecForm';
import { Confirm, Empty, ErrorBox, Modal, Notice, Pager, Spinner, StatusBadge } from '../../components/ui';
import { splitList } from '../../format';
import { useAsync, useDocumentTitle } from '../../hooks';
import { CHANNEL_KINDS, type Channel, type ChannelTestResult } from '../../types';

const PAGE_SIZE = 20;

function fields(editing: boolean): FieldSpec[] {
  return [
    { name: 'name', label: 'Name', required: true },
    { name: 'kind', label: 'Kind', type: 'select', options: CHANNEL_KINDS.map((k) => [k, k]) },
    {
      name: 'base_url',
      label: 'Base URL',
      type: 'url',
      placeholder: 'https://api.example.com/v1',
      hint: "Empty: the kind's public API. For an OpenAI-compatible server, the address ending in /v1 (http://127.0.0.1:11434/v1).",
      wide: true,
    },
    {
      name: 'keys',
      label: 'Upstream keys',
      type: 'textarea',
      hint: editing
        ? 'One per line. Leave empty to keep the stored keys; a new base URL on another host needs them again.'
        : 'One per line; used in turn.',
    },
    {
      name: 'models',
      label: 'Models',
      type: 'textarea',
      hint: 'Model ids this upstream serves, comma or line separated. Empty: the models its GET /models lists (OpenAI-compatible, Anthropic, Gemini).',
    },
    {
      name: 'model_mapping',
      label: 'Model mapping (JSON)',
      type: 'textarea',
      hint: 'Optional: {"public-model": "upstream-model"}',
    },
    {
      name: 'settings_pricing',
      label: 'Prices on this upstream (JSON)',
      type: 'textarea',
      hint: 'Optional: what this upstream charges, by model id, over the model\'s own prices (USD per token): {"openai/gpt-4o-mini": {"prompt": "0.0000001", "completion": "0.0000004"}}. Fields left out keep the model\'s price.',
      wide: true,
    },
    {
      name: 'settings_headers',
      label: 'Extra request headers (JSON)',
      type: 'textarea',
      hint: editing
        ? 'Optional: {"x-team": "search"}. Stored values are shown masked: a masked value keeps the stored one; a new base URL on another host needs them again.'
        : 'Optional: headers sent with every request to this upstream: {"x-team": "search"}.',
      wide: true,
    },
    { name: 'priority', label: 'Priority', type: 'number', hint: 'Higher is tried first.' },
    {
      name: 'weight',
      label: 'Weight',
      type: 'number',
      min: 1,
      hint: 'Share among upstreams of equal priority: a whole number from 1.',
    },
    {
      name: 'status',
      label: 'Status',
      type: 'select',
      options: [
        ['1', 'Enabled'],
        ['2', 'Disabled'],
      ],
    },
  ];
}

function toValues(c?: Channel): FormValues {
  return {
    name: c?.name ?? '',
    kind: c?.kind ?? 'openai-compatible',
    base_url: c?.base_url ?? '',
    keys: '',
    models: (c?.models ?? []).join(', '),
    model_mapping:
      c?.model_mapping && Object.keys(c.model_mapping).length ? JSON.stringify(c.model_mapping, null, 2) : '',
    settings_pricing: pricingText(c),
    settings_headers: headersText(c),
    priority: String(c?.priority ?? 0),
    weight: String(c?.weight ?? 1),
    status: String(c?.status ?? 1),
  };
}

/** The channel's `settings.pricing` as the form shows it; empty when it has none. */
function pricingText(c?: Channel): string {
  const p = c?.settings?.pricing;
  return p && typeof p === 'object' && Object.keys(p).length ? JSON.stringify(p, null, 2) : '';
}

/** The channel's `settings.headers` as the form shows it (values masked by the API); empty when none. */
function headersText(c?: Channel): string {
  const h = c?.settings?.headers;
  return h && typeof h === 'object' && Object.keys(h).length ? JSON.stringify(h, null, 2) : '';
}

/** A settings field the form shows as JSON: its value when changed (null: cleared), else undefined. */
function changedJson(text: string, before: string, field: string, creating: boolean): unknown {
  if (creating ? !text : text === before.trim()) return undefined;
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, `settings.${field.replace('settings_', '')}: not valid JSON`, field);
  }
}

function toBody(v: FormValues, c?: Channel): Record<string, unknown> {
  let mapping: Record<string, string> = {};
  if (str(v.model_mapping)) {
    try {
      mapping = JSON.parse(str(v.model_mapping));
    } catch {
      throw new ApiError(400, 'model_mapping: not valid JSON', 'model_mapping');
    }
  }
  const body: Record<string, unknown> = {
    name: str(v.name),
    kind: v.kind,
    base_url: str(v.base_url),
    models: splitList(str(v.models)),
    model_mapping: mapping,
    priority: numOrNull(v.priority) ?? 0,
    weight: numOrNull(v.weight) ?? 1,
    status: Number(v.status),
  };
  const keys = str(v.keys)
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
  if (keys.length || !c) body.keys = keys;
  // The form sends every field it shows, and save() the settings it opened with: only over the
  // revision it opened with (`edit` reads the channel), or a change made since would be undone.
  if (c) Object.assign(body, { id: c.id, revision: c.revision });
  // `settings` is replaced whole by PUT: it goes only when the prices or the headers changed
  // (save() lays them over the channel's other settings, which the form does not show: rpm...).
  const pricing = changedJson(str(v.settings_pricing), pricingText(c), 'settings_pricing', !c);
  const headers = changedJson(str(v.settings_headers), headersText(c), 'settings_headers', !c);
  if (pricing !== undefined || headers !== undefined) {
    const settings: Record<string, unknown> = {};
    if (pricing !== undefined) settings.pricing = pricing;
    if (headers !== undefined) settings.headers = headers;
    body.settings = settings;
  }
  return body;
}

/**
 * Channels declared in the config file or the environment are put back by every start, and
 * come back after a delete (docs/configuration.md, "Declared channels"): say so where an
 * administrator would otherwise edit in vain.
 */
const DECLARED: Record<string, { badge: string; by: string; change: string; remove: string }> = {
  config: {
    badge: 'config file',
    by: 'in the config file',
    change: 'the file',
    remove: 'remove it from the file',
  },
  env: {
    badge: 'environment',
    by: 'by environment variables',
    change: 'the variables',
    remove: 'unset its variables',
  },
};

function SourceBadge({ c }: { c: Channel }) {
  const d = DECLARED[c.source];
  if (!d) return null;
  return (
    <span
      className="badge badge-muted badge-gap"
      title={`Declared ${d.by}: console edits last until the next restart`}
    >
      {d.badge}
    </span>
  );
}

/** Kinds whose upstream lists its models (GET /models), so a refresh can read them again. */
const LISTS_MODELS = new Set(['openai-compatible', 'anthropic', 'gemini']);
const SHOWN_MODELS = 6;

/** Whether the channel serves what its upstream lists rather than models it names. */
function listsItsModels(c: Channel): boolean {
  return LISTS_MODELS.has(c.kind) && c.models.length === 0 && !Object.keys(c.model_mapping ?? {}).length;
}

/**
 * What the channel serves now. `models` is only what it declares: empty for one that serves its
 * upstream's listing, which this column showed as serving nothing.
 */
function ServedModels({ c }: { c: Channel }) {
  const served = c.served_models ?? c.models;
  if (!served.length) return <span>None{listsItsModels(c) ? ' listed yet' : ''}</span>;
  const more = served.length - SHOWN_MODELS;
  return (
    <>
      <span title={more > 0 ? served.join(', ') : undefined}>
        {served.slice(0, SHOWN_MODELS).join(', ')}
        {more > 0 && ` and ${more} more`}
      </span>
      {listsItsModels(c) && <div className="meta">listed by the upstream</div>}
    </>
  );
}

function maskedKeys(keys: Channel['keys']): string {
  const list = Array.isArray(keys) ? keys : keys ? String(keys).split('\n') : [];
  return list.length ? `${list.length} key${list.length > 1 ? 's' : ''}` : 'no keys';
}

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
interface TestState {
  busy: boolean;
  result?: ChannelTestResult;
  error?: string;
}

/** The one-line verdict, announced where the Test button is. */
function testSummary(t: TestState): string {
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
function TestFailure({ c, r }: { c: Channel; r: ChannelTestResult }) {
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

export function Upstreams() {
  useDocumentTitle('Upstreams');
  const [page, setPage] = useState(0);
  const list = useAsync(() => api.page<Channel>('/channel', { p: page, page_size: PAGE_SIZE }), [page]);
  const [editing, setEditing] = useState<Channel | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Channel | null>(null);
  const [tests, setTests] = useState<Record<number, TestState>>({});
  const [refreshes, setRefreshes] = useState<Record<number, { busy: boolean; text: string; ok?: boolean }>>(
    {},
  );
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<string | null>(null);

  async function save(v: FormValues) {
    setNotice('');
    setError(null);
    const current = editing === 'new' || editing === null ? undefined : editing;
    const body = toBody(v, current);
    if (body.settings) {
      // Over the settings the form opened with: the revision sent with them refuses the save if
      // they have changed since (another tab, the CLI), so none is dropped. A field cleared in
      // the form (null) is left out. The masked header values sent back keep the stored ones.
      const merged: Record<string, unknown> = { ...(current?.settings ?? {}), ...(body.settings as object) };
      for (const k of Object.keys(merged)) if (merged[k] === null) delete merged[k];
      body.settings = merged;
    }
    if (current) await api.put('/channel', body).catch((e) => changedMeanwhile(e, current));
    else await api.post('/channel', body);
    setNotice(`Saved upstream “${body.name}”.`);
    setEditing(null);
    list.reload();
  }

  /**
   * The form starts from the channel as it is now, not as the list read it: a list left open
   * while another administrator (or the CLI) changed the channel would otherwise show old values
   * and refuse every save with a 409. The list's copy serves when the read fails.
   */
  async function edit(c: Channel) {
    setNotice('');
    setError(null);
    const now = await api.get<Channel>(`/channel/${c.id}`).catch(() => null);
    setEditing(now ?? c);
  }

  /**
   * A 409 from a channel now at another revision than the form's: someone changed it since the
   * form opened. Said so (the API's message speaks of revisions), with the list reloaded.
   */
  async function changedMeanwhile(e: unknown, c: Channel): Promise<never> {
    if (e instanceof ApiError && e.status === 409 && c.revision !== undefined) {
      const now = await api.get<Channel>(`/channel/${c.id}`).catch(() => null);
      if (now && now.revision !== c.revision) {
        list.reload();
        throw new ApiError(
          409,
          `Not saved: “${c.name}” was changed elsewhere since this form opened, and saving would undo that change. Cancel and edit it again to start from its current values, then redo your change.`,
        );
      }
    }
    throw e;
  }

  async function test(c: Channel) {
    setNotice('');
    setError(null);
    setTests((t) => ({ ...t, [c.id]: { busy: true } }));
    try {
      // The call succeeds when the upstream fails: the verdict, and what failed, are in the data.
      const env = await api.verdict<ChannelTestResult | null>(`/channel/${c.id}/test`);
      const result: ChannelTestResult = {
        ...(env.data ?? {}),
        success: env.success && env.data?.success !== false,
      };
      if (!result.success && !result.message) result.message = env.message;
      setTests((t) => ({ ...t, [c.id]: { busy: false, result } }));
    } catch (e) {
      setTests((t) => ({ ...t, [c.id]: { busy: false, error: errorText(e) } }));
    }
  }

  /** Reads the upstream's model list again; a failure says why (a base URL without /v1, a key). */
  async function refresh(c: Channel) {
    setNotice('');
    setError(null);
    setRefreshes((t) => ({ ...t, [c.id]: { busy: true, text: 'Listing…' } }));
    try {
      const names = await api.post<string[]>(`/channel/${c.id}/models/refresh`);
      const n = Array.isArray(names) ? names.length : 0;
      setRefreshes((t) => ({
        ...t,
        [c.id]: { busy: false, ok: true, text: `Listed ${n} model${n === 1 ? '' : 's'}.` },
      }));
    } catch (e) {
      setRefreshes((t) => ({ ...t, [c.id]: { busy: false, ok: false, text: errorText(e) } }));
    }
    list.reload();
  }

  async function toggle(c: Channel) {
    setNotice('');
    setError(null);
    try {
      await api.put('/channel', { id: c.id, status: c.status === 1 ? 2 : 1 });
      const until = DECLARED[c.source] ? ` until the next restart (declared ${DECLARED[c.source].by})` : '';
      setNotice(`Upstream “${c.name}” ${c.status === 1 ? 'disabled' : 'enabled'}${until}.`);
      list.reload();
    } catch (e) {
      setError(errorText(e));
    }
  }

  async function remove() {
    setNotice('');
    setError(null);
    if (!deleting) return;
    await api.del(`/channel/${deleting.id}`);
    setNotice(`Deleted upstream “${deleting.name}”.`);
    setDeleting(null);
    list.reload();
  }

  const current = editing === 'new' ? undefined : (editing ?? undefined);
  const declared = current && DECLARED[current.source];
  const deletingDeclared = deleting && DECLARED[deleting.source];
  return (
    <>
      <div className="page-head">
        <h1>Upstreams</h1>
        <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
          New upstream
        </button>
      </div>
      <p className="meta">
        Providers the gateway routes requests to. Keys are never shown again after saving.
      </p>
      <Notice>{notice}</Notice>
      <ErrorBox error={error} />
      {list.loading && !list.data && <Spinner />}
      <ErrorBox error={list.error} onRetry={list.reload} />
      {list.data?.total === 0 && <Empty title="No upstreams yet">Add one to start serving models.</Empty>}
      {!!list.data?.items.length && (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">Upstreams</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Models</th>
                <th scope="col">Priority / weight</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((c) => (
                <Fragment key={c.id}>
                  <tr>
                    <th scope="row">
                      {c.name}
                      <SourceBadge c={c} />
                      <div className="meta break">{c.base_url}</div>
                      <div className="meta">{maskedKeys(c.keys)}</div>
                    </th>
                    <td>{c.kind}</td>
                    <td className="wrap-cell">
                      <ServedModels c={c} />
                      {listsItsModels(c) && (
                        <button
                          type="button"
                          className="btn btn-small cell-action"
                          aria-label={`Refresh the models of ${c.name}`}
                          onClick={() => refresh(c)}
                          disabled={refreshes[c.id]?.busy}
                        >
                          Refresh
                        </button>
                      )}
                      <div
                        aria-live="polite"
                        className={`test-result ${refreshes[c.id]?.ok === false ? 'text-error' : 'text-ok'}`}
                      >
                        {refreshes[c.id]?.text}
                      </div>
                    </td>
                    <td>
                      {c.priority} / {c.weight}
                    </td>
                    <td>
                      <StatusBadge status={c.status} />
                    </td>
                    <td className="actions">
                      <button
                        type="button"
                        className="btn btn-small"
                        aria-label={`Test ${c.name}`}
                        onClick={() => test(c)}
                        disabled={tests[c.id]?.busy}
                      >
                        Test
                      </button>
                      <button
                        type="button"
                        className="btn btn-small"
                        aria-label={`Edit ${c.name}`}
                        onClick={() => edit(c)}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        className="btn btn-small"
                        aria-label={`${c.status === 1 ? 'Disable' : 'Enable'} ${c.name}`}
                        onClick={() => toggle(c)}
                      >
                        {c.status === 1 ? 'Disable' : 'Enable'}
                      </button>
                      <button
                        type="button"
                        className="btn btn-small btn-danger"
                        aria-label={`Delete ${c.name}`}
                        onClick={() => setDeleting(c)}
                      >
                        Delete
                      </button>
                      <div
                        aria-live="polite"
                        className={`test-result ${tests[c.id] && !tests[c.id].busy && !tests[c.id].result?.success ? 'text-error' : 'text-ok'}`}
                      >
                        {tests[c.id] && testSummary(tests[c.id])}
                      </div>
                    </td>
                  </tr>
                  {tests[c.id]?.result && !tests[c.id].busy && !tests[c.id].result?.success && (
                    <tr className="test-failure-row">
                      <td colSpan={6}>
                        <TestFailure c={c} r={tests[c.id].result as ChannelTestResult} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      <Modal
        title={current ? `Edit ${current.name}` : 'New upstream'}
        open={editing !== null}
        onClose={() => setEditing(null)}
        wide
      >
        {declared && (
          <p className="alert alert-warn" role="note">
            Declared {declared.by}: edits last until the next restart; change {declared.change} instead.
          </p>
        )}
        {editing !== null && (
          <SpecForm
            key={current?.id ?? 'new'}
            fields={fields(!!current)}
            initial={toValues(current)}
            submitLabel={current ? 'Save changes' : 'Create upstream'}
            onSubmit={save}
            onCancel={() => setEditing(null)}
          />
        )}
      </Modal>
      <Confirm
        open={deleting !== null}
        title="Delete upstream?"
        message={
          deletingDeclared
            ? `Requests will no longer be routed to “${deleting.name}” until the next restart, which brings it back: it is declared ${deletingDeclared.by}. To delete it for good, ${deletingDeclared.remove}.`
            : `Requests will no longer be routed to “${deleting?.name ?? ''}”.`
        }
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}

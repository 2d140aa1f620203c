import { type FormEvent, useEffect, useState } from 'react';
import { api } from '../api';
import { isAdmin, useAuth } from '../auth';
import { Empty, ErrorBox, Field, Pager, Spinner, TableWrap } from '../components/ui';
import { numberRuleProblem } from '../field-rules';
import {
  formatDate,
  formatNumber,
  formatUsd,
  fromUtcParam,
  toUnix,
  toUnixEnd,
  toUtcParam,
  userName,
} from '../format';
import { useAsync, useDocumentTitle } from '../hooks';
import { navigate, useLocation } from '../router';
import type { LogRecord, User } from '../types';

const PAGE_SIZE = 50;
const EMPTY = { model: '', key_id: '', user_id: '', status: '', from: '', to: '' };
type Filters = typeof EMPTY;
/** Ids are rows of the database: integers from 1 to 2^31 - 1. */
const ID_MAX = 2_147_483_647;

/**
 * What is wrong with the filters, by field, before anything is sent: the server would refuse an
 * id that is not a positive integer, or a period that ends before it starts.
 */
function filterErrors(f: Filters, admin: boolean): Partial<Record<keyof Filters, string>> {
  const errors: Partial<Record<keyof Filters, string>> = {};
  // In the words every form of the console uses for the same rule (field-rules).
  const id = (v: string): string | null => {
    const t = v.trim();
    if (!t) return null;
    return (
      numberRuleProblem(Number(t), { min: 1, max: ID_MAX, integer: true }) ??
      (/^[0-9]+$/.test(t) ? null : 'A whole number.')
    );
  };
  const keyId = id(f.key_id);
  if (keyId) errors.key_id = keyId;
  const userId = admin ? id(f.user_id) : null;
  if (userId) errors.user_id = userId;
  const status = f.status.trim();
  if (status && !(/^[0-9]{3}$/.test(status) && Number(status) >= 100 && Number(status) <= 599))
    errors.status = 'An HTTP status from 100 to 599.';
  const from = toUnix(f.from);
  const to = toUnix(f.to);
  if (from !== null && to !== null && from > to) errors.to = 'The end of the period is before its start.';
  return errors;
}

const TEXT_FILTERS = ['model', 'key_id', 'user_id', 'status'] as const;

/**
 * The filters a Logs URL carries (`?model=gpt&status=429&from=2030-01-02T09:00Z&p=1`): the
 * applied ones, so a reload, a shared link or Back shows the same requests. The period's ends are
 * UTC minutes, the same period in every time zone; a user id is an admin's filter only.
 */
function filtersOf(query: URLSearchParams, admin: boolean): Filters {
  const f = { ...EMPTY };
  for (const k of TEXT_FILTERS) f[k] = query.get(k) ?? '';
  if (!admin) f.user_id = '';
  f.from = fromUtcParam(query.get('from'));
  f.to = fromUtcParam(query.get('to'));
  return f;
}

function pageOf(query: URLSearchParams): number {
  const p = Number(query.get('p') ?? 0);
  return Number.isInteger(p) && p > 0 && p <= 1_000_000 ? p : 0;
}

function logsHref(path: string, f: Filters, page: number): string {
  const q = new URLSearchParams();
  for (const k of TEXT_FILTERS) if (f[k].trim()) q.set(k, f[k].trim());
  if (f.from) q.set('from', toUtcParam(f.from));
  if (f.to) q.set('to', toUtcParam(f.to));
  if (page > 0) q.set('p', String(page));
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The user as a person reads it: display name, else login name, else the id of a deleted user. */
function userLabel(r: LogRecord) {
  if (r.user_id == null) return '—';
  if (r.username == null) return <span className="meta">user #{r.user_id} (deleted)</span>;
  const shown = r.user_display_name || r.username;
  return (
    <>
      {shown}
      <div className="meta">
        {shown !== r.username ? `${r.username} · ` : ''}#{r.user_id}
      </div>
    </>
  );
}

/** The key by name with its id (the id is what the Key id filter takes). */
function keyLabel(r: LogRecord) {
  if (r.key_id == null) return '—';
  if (r.key_name == null) return <span className="meta">key #{r.key_id} (deleted)</span>;
  return (
    <>
      {r.key_name}
      <div className="meta">#{r.key_id}</div>
    </>
  );
}

function isOk(status: LogRecord['status']): boolean {
  const n = Number(status);
  return (
    status === 'success' || status === 'ok' || (Number.isFinite(n) && ((n >= 200 && n < 300) || n === 1))
  );
}

export function Logs() {
  useDocumentTitle('Request logs');
  const { user } = useAuth();
  const admin = isAdmin(user);
  const { path, query } = useLocation();
  const search = query.toString();
  // What the list shows is what the URL says: Apply, Reset and the pager push a new one, Back
  // and Forward return to the last, and the form follows it.
  const filters = filtersOf(query, admin);
  const page = pageOf(query);
  const urlErrors = filterErrors(filters, admin);
  const urlInvalid = Object.keys(urlErrors).length > 0;
  const [draft, setDraft] = useState(filters);
  const [errors, setErrors] = useState(urlErrors);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the URL's query (search) decides
  useEffect(() => {
    setDraft(filters);
    setErrors(urlErrors);
  }, [search, admin]);
  const list = useAsync(
    () =>
      // A link with a filter the server would refuse asks nothing: the form says what to correct.
      urlInvalid
        ? Promise.resolve(undefined)
        : api.page<LogRecord>('/log', {
            p: page,
            page_size: PAGE_SIZE,
            model: filters.model.trim(),
            key_id: filters.key_id.trim(),
            user_id: admin ? filters.user_id.trim() : '',
            status: filters.status.trim(),
            from: toUnix(filters.from),
            to: toUnixEnd(filters.to),
          }),
    [search, admin],
  );

  // Whom an administrator can pick: every user, by name (the list Usage and Users read).
  const users = useAsync(() => (admin ? api.all<User>('/user') : Promise.resolve(undefined)), [admin]);

  function apply(e: FormEvent) {
    e.preventDefault();
    const found = filterErrors(draft, admin);
    setErrors(found);
    const first = Object.keys(found)[0];
    if (first) {
      document.getElementById(`lf-${first}`)?.focus();
      return;
    }
    const to = logsHref(path, draft, 0);
    // The same filters again: asked again, for the requests made since.
    if (to === logsHref(path, filters, page)) list.reload();
    else navigate(to);
  }

  function set(k: keyof Filters, v: string) {
    setDraft((d) => ({ ...d, [k]: v }));
    setErrors((e) => {
      // The period's message sits under To but is about both ends.
      const key = k === 'from' ? 'to' : k;
      if (!e[key]) return e;
      const { [key]: _, ...rest } = e;
      return rest;
    });
  }

  const invalid = Object.keys(errors).length > 0;
  // Whether the list shown is narrowed by a filter (an empty one then says so, not "no requests").
  const filtered = logsHref(path, filters, 0) !== path;

  function reset() {
    setDraft(EMPTY);
    setErrors({});
    navigate(path);
  }

  return (
    <>
      <h1>Request logs</h1>
      <form className="toolbar filters" onSubmit={apply} aria-label="Filter logs">
        <div className="field">
          <label htmlFor="lf-model">Model</label>
          <input id="lf-model" value={draft.model} onChange={(e) => set('model', e.target.value)} />
        </div>
        <Field label="Key id" id="lf-key_id" error={errors.key_id}>
          {(p) => (
            <input
              {...p}
              inputMode="numeric"
              value={draft.key_id}
              onChange={(e) => set('key_id', e.target.value)}
            />
          )}
        </Field>
        {admin && (
          <Field label="User" id="lf-user_id" error={errors.user_id}>
            {(p) => (
              // Chosen by name; the URL keeps the id. Until the list loads (or when it cannot), or
              // for a user since deleted, the URL's id is offered as it is.
              <select {...p} value={draft.user_id.trim()} onChange={(e) => set('user_id', e.target.value)}>
                <option value="">Everyone</option>
                {draft.user_id.trim() && !users.data?.some((u) => String(u.id) === draft.user_id.trim()) && (
                  <option value={draft.user_id.trim()}>
                    {users.data && !errors.user_id
                      ? `user #${draft.user_id.trim()} (deleted)`
                      : `user #${draft.user_id.trim()}`}
                  </option>
                )}
                {users.data?.map((u) => (
                  <option key={u.id} value={String(u.id)}>
                    {userName(u)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        <Field label="Status" id="lf-status" error={errors.status}>
          {(p) => (
            <input
              {...p}
              inputMode="numeric"
              placeholder="e.g. 200 or 429"
              value={draft.status}
              onChange={(e) => set('status', e.target.value)}
            />
          )}
        </Field>
        <Field label="From" id="lf-from">
          {(p) => (
            <input
              {...p}
              type="datetime-local"
              value={draft.from}
              onChange={(e) => set('from', e.target.value)}
            />
          )}
        </Field>
        <Field label="To" id="lf-to" error={errors.to}>
          {(p) => (
            <input
              {...p}
              type="datetime-local"
              value={draft.to}
              onChange={(e) => set('to', e.target.value)}
            />
          )}
        </Field>
        <div className="filter-actions">
          <button type="submit" className="btn btn-primary">
            Apply
          </button>
          <button type="button" className="btn" onClick={reset}>
            Reset
          </button>
        </div>
      </form>
      <div aria-live="polite" aria-busy={list.loading}>
        {list.loading && <Spinner label="Loading logs…" />}
        {!invalid && <ErrorBox error={list.error} onRetry={list.reload} />}
        {invalid && <p className="meta">Correct the highlighted filter to see matching requests.</p>}
        {!invalid && !list.loading && list.data?.items.length === 0 && !filtered && (
          <Empty title="No requests found">Requests to /v1 show up here as they happen.</Empty>
        )}
        {!invalid && !list.loading && list.data?.items.length === 0 && filtered && (
          <Empty title="Nothing matches these filters.">
            <button type="button" className="btn" onClick={reset}>
              Clear the filters
            </button>
          </Empty>
        )}
        {!invalid && !list.loading && !!list.data?.items.length && (
          <TableWrap caption="Requests, newest first" compact>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Model</th>
                {admin && <th scope="col">User</th>}
                <th scope="col">Key</th>
                <th scope="col">Tokens in / out</th>
                <th scope="col">Cost</th>
                <th scope="col">Latency / TTFT</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((r) => (
                <tr key={r.id}>
                  <td>{formatDate(r.created_time)}</td>
                  <td>
                    <span className="mono">{r.model}</span>
                    <div className="meta">{[r.provider, r.endpoint].filter(Boolean).join(' · ')}</div>
                  </td>
                  {admin && <td>{userLabel(r)}</td>}
                  <td>{keyLabel(r)}</td>
                  <td>
                    {formatNumber(r.prompt_tokens)} / {formatNumber(r.completion_tokens)}
                  </td>
                  <td>{formatUsd(r.cost)}</td>
                  <td>
                    {r.latency_ms != null ? `${formatNumber(r.latency_ms)} ms` : '—'}
                    {r.ttft_ms != null && (
                      <div className="meta">{formatNumber(r.ttft_ms)} ms first token</div>
                    )}
                  </td>
                  <td>
                    <span className={`badge ${isOk(r.status) ? 'badge-ok' : 'badge-warn'}`}>
                      {String(r.status)}
                    </span>
                    {r.error_kind && <div className="meta">{r.error_kind}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
        {!invalid && list.data && (
          <Pager
            page={page}
            pageSize={PAGE_SIZE}
            total={list.data.total}
            onPage={(p) => navigate(logsHref(path, filters, p))}
          />
        )}
      </div>
    </>
  );
}

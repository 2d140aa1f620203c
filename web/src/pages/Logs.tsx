import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { isAdmin, useAuth } from '../auth';
import { Empty, ErrorBox, Pager, Spinner } from '../components/ui';
import { formatDate, formatNumber, formatUsd, toUnix } from '../format';
import { useAsync, useDocumentTitle } from '../hooks';
import type { LogRecord } from '../types';

const PAGE_SIZE = 50;
const EMPTY = { model: '', key_id: '', user_id: '', status: '', from: '', to: '' };

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
  const [draft, setDraft] = useState(EMPTY);
  const [filters, setFilters] = useState(EMPTY);
  const [page, setPage] = useState(0);
  const list = useAsync(
    () =>
      api.page<LogRecord>('/log', {
        p: page,
        page_size: PAGE_SIZE,
        model: filters.model,
        key_id: filters.key_id,
        user_id: admin ? filters.user_id : '',
        status: filters.status,
        from: toUnix(filters.from),
        to: toUnix(filters.to),
      }),
    [page, filters, admin],
  );

  function apply(e: FormEvent) {
    e.preventDefault();
    setPage(0);
    setFilters({ ...draft });
  }

  function set(k: keyof typeof EMPTY, v: string) {
    setDraft((d) => ({ ...d, [k]: v }));
  }

  return (
    <>
      <h1>Request logs</h1>
      <form className="toolbar filters" onSubmit={apply} aria-label="Filter logs">
        <div className="field">
          <label htmlFor="lf-model">Model</label>
          <input id="lf-model" value={draft.model} onChange={(e) => set('model', e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="lf-key">Key id</label>
          <input
            id="lf-key"
            inputMode="numeric"
            value={draft.key_id}
            onChange={(e) => set('key_id', e.target.value)}
          />
        </div>
        {admin && (
          <div className="field">
            <label htmlFor="lf-user">User id</label>
            <input
              id="lf-user"
              inputMode="numeric"
              value={draft.user_id}
              onChange={(e) => set('user_id', e.target.value)}
            />
          </div>
        )}
        <div className="field">
          <label htmlFor="lf-status">Status</label>
          <input
            id="lf-status"
            type="number"
            min={100}
            max={599}
            placeholder="e.g. 200 or 429"
            value={draft.status}
            onChange={(e) => set('status', e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="lf-from">From</label>
          <input
            id="lf-from"
            type="datetime-local"
            value={draft.from}
            onChange={(e) => set('from', e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="lf-to">To</label>
          <input
            id="lf-to"
            type="datetime-local"
            value={draft.to}
            onChange={(e) => set('to', e.target.value)}
          />
        </div>
        <div className="filter-actions">
          <button type="submit" className="btn btn-primary">
            Apply
          </button>
          <button
            type="button"
            className="btn"
            onClick={() => {
              setDraft(EMPTY);
              setFilters(EMPTY);
              setPage(0);
            }}
          >
            Reset
          </button>
        </div>
      </form>
      <div aria-live="polite" aria-busy={list.loading}>
        {list.loading && <Spinner label="Loading logs…" />}
        <ErrorBox error={list.error} onRetry={list.reload} />
        {!list.loading && list.data?.items.length === 0 && (
          <Empty title="No requests found">Requests to /v1 show up here as they happen.</Empty>
        )}
        {!list.loading && !!list.data?.items.length && (
          <div className="table-wrap">
            <table className="table table-compact">
              <caption className="sr-only">Requests, newest first</caption>
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
                    {admin && <td>{r.user_id}</td>}
                    <td>{r.key_id ?? '—'}</td>
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
            </table>
          </div>
        )}
        {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      </div>
    </>
  );
}

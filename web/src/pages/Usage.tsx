import { useState } from 'react';
import { api } from '../api';
import { isAdmin, useAuth } from '../auth';
import { BarChart } from '../components/BarChart';
import { ErrorBox, Field, Spinner } from '../components/ui';
import {
  formatNumber,
  formatUsd,
  fromUtcParam,
  toLocalInput,
  toUnix,
  toUnixEnd,
  toUtcParam,
  userName,
} from '../format';
import { useAsync, useDocumentTitle } from '../hooks';
import { navigate, useLocation } from '../router';
import type { ApiKey, StatBucket, User } from '../types';

const DAY = 86_400;
const GROUPS = ['day', 'model', 'key'] as const;
type Group = (typeof GROUPS)[number];
/** The most ids `GET /api/key?ids=` takes at once (and the most a page of keys holds). */
const IDS_PER_CALL = 100;
/** Ids are rows of the database: integers from 1 to 2^31 - 1. */
const ID_MAX = 2_147_483_647;

/** A user id from the URL, or '' (everyone) for anything that is not one. */
function userIdOf(raw: string | null): string {
  if (!raw || !/^[1-9][0-9]*$/.test(raw) || Number(raw) > ID_MAX) return '';
  return raw;
}

/**
 * The names of the keys whose usage is charted, asked for by id, a hundred at a time: a key past
 * the first page of the whole list is named too, and keys without usage are never fetched.
 */
async function keyNamesOf(ids: string[]): Promise<Map<string, string>> {
  const calls: Promise<ApiKey[]>[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_CALL) {
    const chunk = ids.slice(i, i + IDS_PER_CALL);
    calls.push(
      api.page<ApiKey>('/key', { ids: chunk.join(','), page_size: IDS_PER_CALL }).then((p) => p.items),
    );
  }
  const keys = (await Promise.all(calls)).flat();
  return new Map(keys.map((k) => [String(k.id), k.name]));
}

/** Key names by id; `complete` when every id was asked for and answered (a missing one is deleted). */
interface KeyNames {
  names: Map<string, string>;
  complete: boolean;
}

function bucketLabel(b: StatBucket['bucket'], group: string, keys: KeyNames): string {
  if (group === 'day') {
    const n = typeof b === 'number' ? b : Number(b);
    // A bucket is a UTC day, given as its first second (docs/quotas.md): named in the browser's
    // time zone, west of UTC that second is the evening before, and the bar took that day's name.
    if (Number.isFinite(n) && n > 1e8)
      return new Date(n * 1000).toLocaleDateString(undefined, {
        month: 'short',
        day: 'numeric',
        timeZone: 'UTC',
      });
    return String(b);
  }
  if (group === 'key') {
    if (b == null || b === '') return 'no key';
    // Usage is charted for keys the caller can see, so one the answered lookup left out is gone.
    return keys.names.get(String(b)) ?? (keys.complete ? `key #${b} (deleted)` : `key #${b}`);
  }
  return String(b || 'unknown');
}

export function Usage() {
  useDocumentTitle('Usage');
  const admin = isAdmin(useAuth().user);
  // The period and grouping live in the URL (`?group=model&from=2030-01-02T09:00Z&to=...`, ends
  // as UTC minutes), so a reload, a shared link or Back shows the same chart. Each change
  // replaces the URL: typing a date is many changes, and Back leaves the page as it did.
  const { path, query } = useLocation();
  const [defaultFrom] = useState(() => toLocalInput(Math.floor(Date.now() / 1000) - 30 * DAY));
  const group: Group = GROUPS.find((g) => g === query.get('group')) ?? 'day';
  // No `from`: the last 30 days; `from=` (cleared): from the start.
  const rawFrom = query.get('from');
  const from = rawFrom === null ? defaultFrom : rawFrom === '' ? '' : fromUtcParam(rawFrom) || defaultFrom;
  const to = fromUtcParam(query.get('to'));
  // An administrator's usage of one user (`?user_id=7`), as the Logs page filters; everyone's
  // without it. A user's own usage is all they can see, so they have no such filter.
  const userId = admin ? userIdOf(query.get('user_id')) : '';
  function show(next: { group?: Group; from?: string; to?: string; userId?: string }) {
    const v = { group, from, to, userId, ...next };
    const q = new URLSearchParams();
    if (v.userId) q.set('user_id', v.userId);
    if (v.group !== 'day') q.set('group', v.group);
    if (v.from !== defaultFrom) q.set('from', toUtcParam(v.from));
    if (v.to) q.set('to', toUtcParam(v.to));
    const qs = q.toString();
    navigate(qs ? `${path}?${qs}` : path, { replace: true });
  }
  // A period that ends before it starts is said once, under To, and never sent.
  const start = toUnix(from);
  const end = toUnixEnd(to);
  const badPeriod = start !== null && end !== null && start > end;
  const stats = useAsync(
    () =>
      badPeriod
        ? Promise.resolve([])
        : api.get<StatBucket[]>('/log/stats', { group, from: start, to: end, user_id: userId }),
    [group, start, end, userId],
  );
  // Whom an administrator can pick: every user, by name.
  const users = useAsync(() => (admin ? api.all<User>('/user') : Promise.resolve(undefined)), [admin]);
  const rows = Array.isArray(stats.data) ? stats.data : [];
  // Ids of the keys in the chart (requests without a key have none), in a stable order so the
  // names are asked for again only when the set changes.
  const keyIds =
    group === 'key'
      ? [...new Set(rows.map((r) => String(r.bucket ?? '')).filter((id) => /^[1-9][0-9]*$/.test(id)))].sort()
      : [];
  const keyIdList = keyIds.join(',');
  // A key whose name cannot be read is still charted, by its id: "(deleted)" once the lookup
  // answered without it, plain while the names load or when the lookup failed (said so above
  // the charts, with a retry).
  const keys = useAsync(
    () =>
      keyIds.length
        ? keyNamesOf(keyIds).then((names): KeyNames => ({ names, complete: true }))
        : Promise.resolve(null),
    [keyIdList],
  );
  const keyNames: KeyNames = {
    names: keys.data?.names ?? new Map<string, string>(),
    complete: !keys.loading && keys.data?.complete === true,
  };

  const totals = rows.reduce(
    (t, r) => ({
      requests: t.requests + (r.requests || 0),
      tokens: t.tokens + (r.prompt_tokens || 0) + (r.completion_tokens || 0),
      cost: t.cost + (Number(r.cost) || 0),
    }),
    { requests: 0, tokens: 0, cost: 0 },
  );
  const label = (r: StatBucket) => bucketLabel(r.bucket, group, keyNames);
  const per = group === 'day' ? 'per UTC day' : undefined;

  return (
    <>
      <h1>Usage</h1>
      {/* An administrator's totals are everyone's (GET /api/log/stats), not their own spend. */}
      <p className="meta">
        {!admin
          ? 'Your requests.'
          : userId
            ? 'The requests of the user chosen below.'
            : "Every user's requests, yours included."}
      </p>
      <form className="toolbar filters" onSubmit={(e) => e.preventDefault()} aria-label="Usage period">
        {admin && (
          <div className="field">
            <label htmlFor="u-user">User</label>
            {/* Until the list loads (or when it cannot), the user of the URL is offered by id. */}
            <select id="u-user" value={userId} onChange={(e) => show({ userId: e.target.value })}>
              <option value="">Everyone</option>
              {userId && !users.data?.some((u) => String(u.id) === userId) && (
                <option value={userId}>{users.data ? `user #${userId} (deleted)` : `user #${userId}`}</option>
              )}
              {users.data?.map((u) => (
                <option key={u.id} value={String(u.id)}>
                  {userName(u)}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor="u-group">Group by</label>
          <select id="u-group" value={group} onChange={(e) => show({ group: e.target.value as Group })}>
            <option value="day">Day</option>
            <option value="model">Model</option>
            <option value="key">API key</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="u-from">From</label>
          <input
            id="u-from"
            type="datetime-local"
            value={from}
            onChange={(e) => show({ from: e.target.value })}
          />
        </div>
        <Field label="To" id="u-to" error={badPeriod ? 'The end of the period is before its start.' : null}>
          {(p) => (
            <input {...p} type="datetime-local" value={to} onChange={(e) => show({ to: e.target.value })} />
          )}
        </Field>
      </form>
      {!badPeriod && !stats.error && (
        <div className="stats" aria-live="polite">
          <div className="stat card">
            <span className="stat-label">Requests</span>
            <strong>{formatNumber(totals.requests)}</strong>
          </div>
          <div className="stat card">
            <span className="stat-label">Tokens</span>
            <strong>{formatNumber(totals.tokens)}</strong>
          </div>
          <div className="stat card">
            <span className="stat-label">Cost</span>
            <strong>{formatUsd(totals.cost)}</strong>
          </div>
        </div>
      )}
      {stats.loading && <Spinner label="Loading usage…" />}
      <ErrorBox error={stats.error} onRetry={stats.reload} />
      <ErrorBox
        error={users.error && `The list of users could not be loaded: ${users.error}`}
        onRetry={users.reload}
      />
      {!stats.error && group === 'key' && (
        <ErrorBox
          error={keys.error && `The key names could not be loaded, so keys are shown by id: ${keys.error}`}
          onRetry={keys.reload}
        />
      )}
      {!badPeriod && !stats.loading && !stats.error && (
        <div className="charts">
          <BarChart
            title="Requests"
            subtitle={per}
            series={['requests']}
            bars={rows.map((r) => ({ id: String(r.bucket), label: label(r), values: [r.requests || 0] }))}
            format={formatNumber}
          />
          <BarChart
            title="Tokens"
            subtitle={per}
            series={['prompt', 'completion']}
            bars={rows.map((r) => ({
              id: String(r.bucket),
              label: label(r),
              values: [r.prompt_tokens || 0, r.completion_tokens || 0],
            }))}
            format={formatNumber}
          />
          <BarChart
            title="Cost (USD)"
            subtitle={per}
            series={['cost']}
            bars={rows.map((r) => ({ id: String(r.bucket), label: label(r), values: [Number(r.cost) || 0] }))}
            format={formatUsd}
          />
        </div>
      )}
    </>
  );
}

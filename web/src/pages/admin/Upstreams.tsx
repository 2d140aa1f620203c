/**
 * Admin → Upstreams: the channel list and its actions (test, refresh, edit, enable, delete). Its
 * parts live in ./upstreams/: the form's fields and body, the test verdict, the Models column and
 * the badge of a declared channel.
 */
import { Fragment, useState } from 'react';
import { ApiError, api, errorText } from '../../api';
import { type FormValues, SpecForm } from '../../components/SpecForm';
import {
  Confirm,
  Empty,
  ErrorBox,
  Modal,
  Notice,
  Pager,
  RowAction,
  Spinner,
  StatusBadge,
  TableWrap,
} from '../../components/ui';
import { useAsync, useDocumentTitle } from '../../hooks';
import { useRowBusy } from '../../row-busy';
import type { Channel, ChannelTestResult } from '../../types';
import { listsItsModels, ServedModels } from './upstreams/ServedModels';
import { DECLARED, SourceBadge } from './upstreams/SourceBadge';
import { asFailure, TestFailure, type TestState, testSummary } from './upstreams/TestFailure';
import { fields, toBody, toValues } from './upstreams/upstream-form';

const PAGE_SIZE = 20;

/** A Refresh of a channel's model list: under way, its outcome, and why it failed. */
interface RefreshState {
  busy: boolean;
  text: string;
  failure?: ChannelTestResult;
}

function maskedKeys(keys: Channel['keys']): string {
  const list = Array.isArray(keys) ? keys : keys ? String(keys).split('\n') : [];
  return list.length ? `${list.length} key${list.length > 1 ? 's' : ''}` : 'no keys';
}

export function Upstreams() {
  useDocumentTitle('Upstreams');
  const [page, setPage] = useState(0);
  const list = useAsync(() => api.page<Channel>('/channel', { p: page, page_size: PAGE_SIZE }), [page]);
  const [editing, setEditing] = useState<Channel | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Channel | null>(null);
  const [tests, setTests] = useState<Record<number, TestState>>({});
  const [refreshes, setRefreshes] = useState<Record<number, RefreshState>>({});
  // The upstreams whose enable/disable is in flight: a second click would send the same PUT again.
  const toggling = useRowBusy(list.data);
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
      // Refused before any upstream was tried (a channel serving no models): the same panel.
      setTests((t) => ({ ...t, [c.id]: { busy: false, result: asFailure(e) } }));
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
        [c.id]: { busy: false, text: `Listed ${n} model${n === 1 ? '' : 's'}.` },
      }));
    } catch (e) {
      const failure = asFailure(e);
      setRefreshes((t) => ({
        ...t,
        [c.id]: { busy: false, text: 'The model list could not be read. Details below.', failure },
      }));
    }
    list.reload();
  }

  async function toggle(c: Channel) {
    if (toggling.has(c.id)) return;
    setNotice('');
    setError(null);
    try {
      await toggling.run(c.id, () => api.put('/channel', { id: c.id, status: c.status === 1 ? 2 : 1 }));
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
    const was = await api.delRow(`/channel/${deleting.id}`);
    setNotice(
      was ? `Deleted upstream “${deleting.name}”.` : `Upstream “${deleting.name}” was already deleted.`,
    );
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
        <TableWrap caption="Upstreams">
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
                      className={`test-result ${refreshes[c.id]?.failure ? 'text-error' : 'text-ok'}`}
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
                    <RowAction verb="Test" of={c.name} onClick={() => test(c)} disabled={tests[c.id]?.busy} />
                    <RowAction verb="Edit" of={c.name} onClick={() => edit(c)} />
                    <RowAction
                      verb={c.status === 1 ? 'Disable' : 'Enable'}
                      of={c.name}
                      disabled={toggling.has(c.id)}
                      onClick={() => toggle(c)}
                    />
                    <RowAction verb="Delete" of={c.name} danger onClick={() => setDeleting(c)} />
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
                {refreshes[c.id]?.failure && !refreshes[c.id].busy && (
                  <tr className="test-failure-row">
                    <td colSpan={6}>
                      <TestFailure c={c} r={refreshes[c.id].failure as ChannelTestResult} action="Refresh" />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </TableWrap>
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

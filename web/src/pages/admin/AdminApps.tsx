import { useEffect, useRef, useState } from 'react';
import { api, errorText } from '../../api';
import { APP_SORTS, DEFAULT_APP_ORDER } from '../../app-sorts';
import { AppForm } from '../../components/AppForm';
import {
  Confirm,
  Empty,
  ErrorBox,
  Modal,
  Notice,
  Pager,
  RowAction,
  Spinner,
  TableWrap,
} from '../../components/ui';
import { categoryLabel, formatDate, formatNumber } from '../../format';
import { useAsync, useDocumentTitle } from '../../hooks';
import { Link, navigate, useLocation } from '../../router';
import { useRowBusy } from '../../row-busy';
import type { App } from '../../types';

const PAGE_SIZE = 20;
const STATUSES = ['', '1', '2'];
const MAX_PAGE = 1_000_000;

export function AdminApps() {
  useDocumentTitle('Manage apps');
  // The filter, order and page live in the URL (`?status=2&order=name+asc&p=1`), as the public
  // catalog's do: a reload, a shared link or Back shows the same list. A value the list does
  // not take shows the default (every app, newest first, the first page).
  const { query } = useLocation();
  const editId = query.get('edit');
  const rawStatus = query.get('status') ?? '';
  const status = STATUSES.includes(rawStatus) ? rawStatus : '';
  const rawOrder = query.get('order') ?? '';
  const order = APP_SORTS.some(([v]) => v === rawOrder) ? rawOrder : DEFAULT_APP_ORDER;
  const page = Math.min(MAX_PAGE, Math.max(0, Math.floor(Number(query.get('p') ?? 0)) || 0));
  const list = useAsync(
    () => api.page<App>('/app', { p: page, page_size: PAGE_SIZE, order, status }),
    [page, order, status],
  );

  /** The address of this list with `next` changed; `edit` only when given. */
  function href(next: { status?: string; order?: string; p?: number; edit?: string | null }): string {
    const v = { status, order, p: page, edit: null, ...next };
    const q = new URLSearchParams();
    if (v.status) q.set('status', v.status);
    if (v.order !== DEFAULT_APP_ORDER) q.set('order', v.order);
    if (v.p > 0) q.set('p', String(v.p));
    if (v.edit) q.set('edit', v.edit);
    const qs = q.toString();
    return qs ? `/admin/apps?${qs}` : '/admin/apps';
  }
  const [editing, setEditing] = useState<App | null | 'new'>(null);
  const [deleting, setDeleting] = useState<App | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  // The apps whose hide/publish or feature is in flight: a second click would send it again.
  const changing = useRowBusy(list.data);

  // One read per `?edit=` id shown: React's development check runs the effect twice on mount,
  // and the read already started answers the second run (a new id, or the same one after the
  // form closed, is read again).
  const asked = useRef<string | null>(null);
  useEffect(() => {
    if (editId === asked.current) return;
    asked.current = editId;
    if (!editId) return;
    // An answer that comes after the address moved on (another id, or the form closed) is
    // dropped: it would open the editor on an app nobody asks for any more.
    const current = () => asked.current === editId;
    api.get<App>(`/app/${editId}`).then(
      (app) => current() && setEditing(app),
      (e) => current() && setError(errorText(e)),
    );
  }, [editId]);

  function closeEditor() {
    setEditing(null);
    if (editId) {
      asked.current = null;
      navigate(href({ edit: null }), { replace: true });
    }
  }

  async function save(body: Record<string, unknown>) {
    setNotice('');
    setError(null);
    const saved = editing === 'new' ? await api.post<App>('/app', body) : await api.put<App>('/app', body);
    setNotice(editing === 'new' ? `Created “${saved?.name ?? body.name}”.` : `Saved “${saved?.name ?? ''}”.`);
    closeEditor();
    list.reload();
  }

  async function patch(app: App, change: Partial<App>, what: string) {
    if (changing.has(app.id)) return;
    setError(null);
    setNotice('');
    try {
      await changing.run(app.id, () => api.put('/app', { id: app.id, ...change }));
      setNotice(`${app.name}: ${what}.`);
      list.reload();
    } catch (e) {
      setError(errorText(e));
    }
  }

  async function remove() {
    setNotice('');
    setError(null);
    if (!deleting) return;
    const was = await api.delRow(`/app/${deleting.id}`);
    setNotice(was ? `Deleted “${deleting.name}”.` : `“${deleting.name}” was already deleted.`);
    setDeleting(null);
    list.reload();
  }

  return (
    <>
      <div className="page-head">
        <h1>Apps</h1>
        <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
          New app
        </button>
      </div>
      <div className="toolbar">
        <div className="field field-inline">
          <label htmlFor="app-status-filter">Show</label>
          <select
            id="app-status-filter"
            value={status}
            onChange={(e) => navigate(href({ status: e.target.value, p: 0 }))}
          >
            <option value="">All</option>
            <option value="1">Published</option>
            <option value="2">Hidden</option>
          </select>
        </div>
        <div className="field field-inline">
          <label htmlFor="app-order">Sort by</label>
          <select
            id="app-order"
            value={order}
            // Another order is another list: its first page, as the catalog's Sort by does.
            onChange={(e) => navigate(href({ order: e.target.value, p: 0 }))}
          >
            {APP_SORTS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </div>
      </div>
      <Notice>{notice}</Notice>
      <ErrorBox error={error} />
      {list.loading && !list.data && <Spinner />}
      <ErrorBox error={list.error} onRetry={list.reload} />
      {/* A page past the end of a list that has apps (an old link) is said by the pager. */}
      {list.data && list.data.total === 0 && status !== '' && (
        <Empty title="Nothing matches these filters.">
          <button type="button" className="btn" onClick={() => navigate(href({ status: '', p: 0 }))}>
            Show all apps
          </button>
        </Empty>
      )}
      {list.data && list.data.total === 0 && status === '' && (
        <Empty title="No apps yet">
          <p>Create the first one with “New app”.</p>
        </Empty>
      )}
      {list.data && list.data.items.length > 0 && (
        <TableWrap caption="Apps in the catalog">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Category</th>
              <th scope="col">State</th>
              <th scope="col">Downloads</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <Link to={`/app/${a.id}`}>{a.name}</Link>
                  {a.featured && <span className="badge badge-accent">★</span>}
                </th>
                <td>{categoryLabel(a.category)}</td>
                <td>
                  <span className={`badge ${a.status === 1 ? 'badge-ok' : 'badge-muted'}`}>
                    {a.status === 1 ? 'Published' : 'Hidden'}
                  </span>
                </td>
                <td>{formatNumber(a.download_count)}</td>
                <td>{formatDate(a.updated_time)}</td>
                <td className="actions">
                  <RowAction verb="Edit" of={a.name} onClick={() => setEditing(a)} />
                  <RowAction
                    verb={a.status === 1 ? 'Hide' : 'Publish'}
                    of={a.name}
                    disabled={changing.has(a.id)}
                    onClick={() =>
                      patch(a, { status: a.status === 1 ? 2 : 1 }, a.status === 1 ? 'hidden' : 'published')
                    }
                  />
                  <RowAction
                    verb={a.featured ? 'Unfeature' : 'Feature'}
                    of={a.name}
                    aria-pressed={a.featured}
                    disabled={changing.has(a.id)}
                    onClick={() =>
                      patch(a, { featured: !a.featured }, a.featured ? 'unfeatured' : 'featured')
                    }
                  />
                  <RowAction verb="Delete" of={a.name} danger onClick={() => setDeleting(a)} />
                </td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
      {list.data && (
        <Pager
          page={page}
          pageSize={PAGE_SIZE}
          total={list.data.total}
          onPage={(p) => navigate(href({ p }))}
        />
      )}

      <Modal
        title={editing === 'new' ? 'New app' : `Edit ${editing?.name ?? ''}`}
        open={editing !== null}
        onClose={closeEditor}
        wide
      >
        {editing !== null && (
          <AppForm
            key={editing === 'new' ? 'new' : editing.id}
            app={editing === 'new' ? null : editing}
            onSave={save}
            onCancel={closeEditor}
          />
        )}
      </Modal>
      <Confirm
        open={deleting !== null}
        title="Delete app?"
        message={
          <>
            “{deleting?.name}” will be removed from the catalog for good. Hiding it instead keeps its download
            count.
          </>
        }
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}

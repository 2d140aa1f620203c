import { useState } from 'react';
import { api } from '../../api';
import { roleName, useAuth } from '../../auth';
import { QUOTA_FIELD, Quota } from '../../components/Quota';
import { type FieldSpec, type FormValues, numOrNull, SpecForm, str } from '../../components/SpecForm';
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
import { NAME_MAX } from '../../field-rules';
import { formatDate } from '../../format';
import { useAsync, useDocumentTitle } from '../../hooks';
import { ROLE, type User } from '../../types';

const PAGE_SIZE = 20;
const KEYS_MANAGED_LABEL = 'An admin manages this user’s API keys (they cannot create their own)';

/**
 * Why `me` may not change `u`, or null when they may. The server's rule: a user is managed only
 * by a role above theirs, root manages everyone, and anyone may edit themselves. (The last-root
 * rules are the server's to say, with a 409.)
 */
function manageBlock(me: User | null, u: User): string | null {
  if (!me || me.role >= ROLE.root || u.id === me.id || u.role < me.role) return null;
  return u.role >= ROLE.root ? 'Only root can change a root account.' : 'Only root can change another admin.';
}

/**
 * Why the signed-in user may not change their own role and status in this form, or null when
 * they may (someone else, or a root with another enabled root beside them). The server's rule:
 * below root, your own role, status and quota are set by a user above you (403); a root may
 * change their own unless no other enabled root would stay (409, the last root).
 */
function ownLock(me: User | null, u: User | undefined, otherRoots: number | undefined): string | null {
  if (!me || !u || u.id !== me.id) return null;
  if (me.role < ROLE.root) return 'Your role, status and quota are set by a user above you.';
  if (otherRoots === 0)
    return 'You are the only enabled root: your role and status stay until another root is enabled.';
  return null;
}

/**
 * `ownBelowRoot`: an admin editing their own record, whose password the server does not take
 * through this form (403: it is changed under Account, with the current one). `lock`: why the
 * role and status (and, below root, the quota) are shown but not changeable.
 */
function fields(
  creating: boolean,
  canRoot: boolean,
  ownBelowRoot: boolean,
  lock: string | null,
): FieldSpec[] {
  // Below root, an admin gives only roles below their own (the server answers 403 otherwise).
  const roles: [string, string][] = [[String(ROLE.user), 'User']];
  if (canRoot) roles.push([String(ROLE.admin), 'Admin'], [String(ROLE.root), 'Root']);
  const locked = (f: FieldSpec): FieldSpec => (lock ? { ...f, disabled: true, hint: lock } : f);
  const all: FieldSpec[] = [
    { name: 'username', label: 'Username', required: creating, maxLength: 64, autoComplete: 'off' },
    { name: 'display_name', label: 'Display name', maxLength: NAME_MAX },
    {
      name: 'password',
      label: creating ? 'Password' : 'New password',
      type: 'password',
      required: creating,
      minLength: 8,
      maxLength: 256,
      autoComplete: 'new-password',
      hint: creating
        ? 'At least 8 characters.'
        : 'At least 8 characters; leave empty to keep the current one.',
    },
    locked({ name: 'role', label: 'Role', type: 'select', options: roles }),
    locked({
      name: 'status',
      label: 'Status',
      type: 'select',
      options: [
        ['1', 'Enabled'],
        ['2', 'Disabled'],
      ],
    }),
    ownBelowRoot ? locked(QUOTA_FIELD) : QUOTA_FIELD,
    // The server's mark (migration 0011): new keys of the user come from an admin. Below root,
    // your own mark is not yours to change (403), so it is not offered there.
    { name: 'keys_admin_managed', label: KEYS_MANAGED_LABEL, type: 'checkbox' },
  ];
  return all.filter((f) => !ownBelowRoot || (f.name !== 'password' && f.name !== 'keys_admin_managed'));
}

export function Users() {
  useDocumentTitle('Users');
  const { user: me, refresh } = useAuth();
  const [page, setPage] = useState(0);
  const list = useAsync(() => api.page<User>('/user', { p: page, page_size: PAGE_SIZE }), [page]);
  const [editing, setEditing] = useState<User | 'new' | null>(null);
  const [deleting, setDeleting] = useState<User | null>(null);
  const [notice, setNotice] = useState('');
  const current = editing === 'new' ? undefined : (editing ?? undefined);
  const canRoot = (me?.role ?? 0) >= ROLE.root;
  // A root editing themselves: how many other enabled roots there are (every user, not a page).
  const self = !!current && current.id === me?.id && canRoot;
  const everyone = useAsync(() => (self ? api.all<User>('/user') : Promise.resolve(undefined)), [self]);
  const otherRoots = everyone.data?.filter(
    (u) => u.id !== me?.id && u.role >= ROLE.root && u.status === 1,
  ).length;
  const lock = ownLock(me, current, otherRoots);

  async function save(v: FormValues) {
    setNotice('');
    const body: Record<string, unknown> = { display_name: str(v.display_name) };
    if (v.role !== undefined) body.role = Number(v.role);
    if (v.status !== undefined) body.status = Number(v.status);
    if (str(v.password)) body.password = v.password;
    body.quota_limit = numOrNull(v.quota_limit);
    if (current) {
      // Only what was changed in the form: a user disabled (or a role changed) by someone else
      // while this form was open is not put back by an edit of the display name.
      if (body.display_name === (current.display_name ?? '')) delete body.display_name;
      if (body.role === current.role) delete body.role;
      if (body.status === current.status) delete body.status;
      if (body.quota_limit === (current.quota_limit ?? null)) delete body.quota_limit;
      // Sent only when changed, as the role: a mark set by an admin's new key while this form
      // was open is not cleared by an edit of the display name.
      if (v.keys_admin_managed !== undefined && v.keys_admin_managed !== !!current.keys_admin_managed)
        body.keys_admin_managed = v.keys_admin_managed === true;
      body.id = current.id;
      if (str(v.username) && str(v.username) !== current.username) body.username = str(v.username);
      await api.put('/user', body);
    } else {
      body.username = str(v.username);
      if (v.keys_admin_managed === true) body.keys_admin_managed = true;
      await api.post('/user', body);
    }
    setNotice(`Saved user ${str(v.username) || current?.username}.`);
    // Your own name is in the header.
    if (current && current.id === me?.id) void refresh();
    setEditing(null);
    list.reload();
  }

  async function remove() {
    setNotice('');
    if (!deleting) return;
    const was = await api.delRow(`/user/${deleting.id}`);
    setNotice(was ? `Deleted user ${deleting.username}.` : `User ${deleting.username} was already deleted.`);
    setDeleting(null);
    list.reload();
  }

  return (
    <>
      <div className="page-head">
        <h1>Users</h1>
        <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
          New user
        </button>
      </div>
      <Notice>{notice}</Notice>
      {list.loading && !list.data && <Spinner />}
      <ErrorBox error={list.error} onRetry={list.reload} />
      {/* A page past the end (its last row deleted, an old link) is said by the pager, not "No users". */}
      {list.data?.total === 0 && <Empty title="No users" />}
      {!!list.data?.items.length && (
        <TableWrap caption="Users">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Quota</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((u) => {
              const block = manageBlock(me, u);
              const deleteBlock = block ?? (u.id === me?.id ? 'You cannot delete your own account.' : null);
              const reasonId = `user-${u.id}-why`;
              return (
                <tr key={u.id}>
                  <th scope="row">
                    {u.username}
                    {u.display_name && u.display_name !== u.username && (
                      <div className="meta">{u.display_name}</div>
                    )}
                    {u.keys_admin_managed && (
                      <div>
                        <span className="badge" title="New API keys of this user come from an admin">
                          Keys managed by an admin
                        </span>
                      </div>
                    )}
                  </th>
                  <td>
                    <span className="badge">{roleName(u.role)}</span>
                  </td>
                  <td>
                    <StatusBadge status={u.status} />
                  </td>
                  <td>
                    <Quota used={u.quota_used ?? 0} limit={u.quota_limit ?? null} />
                  </td>
                  <td>{formatDate(u.created_time)}</td>
                  <td className="actions">
                    <RowAction
                      verb="Edit"
                      of={u.username}
                      aria-describedby={block ? reasonId : undefined}
                      onClick={() => setEditing(u)}
                      disabled={block !== null}
                    />
                    <RowAction
                      verb="Delete"
                      of={u.username}
                      danger
                      aria-describedby={deleteBlock ? reasonId : undefined}
                      onClick={() => setDeleting(u)}
                      disabled={deleteBlock !== null}
                    />
                    {deleteBlock && (
                      <div id={reasonId} className="meta action-note">
                        {deleteBlock}
                      </div>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </TableWrap>
      )}
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      <Modal
        title={current ? `Edit ${current.username}` : 'New user'}
        open={editing !== null}
        onClose={() => setEditing(null)}
      >
        {editing !== null && (
          <SpecForm
            key={current?.id ?? 'new'}
            fields={fields(!current, canRoot, !!current && current.id === me?.id && !canRoot, lock)}
            initial={{
              username: current?.username ?? '',
              display_name: current?.display_name ?? '',
              password: '',
              role: String(current?.role ?? ROLE.user),
              status: String(current?.status ?? 1),
              quota_limit: current?.quota_limit == null ? '' : String(current.quota_limit),
              keys_admin_managed: !!current?.keys_admin_managed,
            }}
            submitLabel={current ? 'Save changes' : 'Create user'}
            onSubmit={save}
            onCancel={() => setEditing(null)}
          />
        )}
      </Modal>
      <Confirm
        open={deleting !== null}
        title="Delete user?"
        message={`${deleting?.username ?? ''} and their API keys will stop working.`}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}

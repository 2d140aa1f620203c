import { useEffect, useRef, useState } from 'react';
import { api, errorText } from '../api';
import { isAdmin, useAuth } from '../auth';
import { QUOTA_FIELD, Quota } from '../components/Quota';
import { SecretDialog } from '../components/SecretDialog';
import { type FieldSpec, type FormValues, numOrNull, SpecForm, str } from '../components/SpecForm';
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
} from '../components/ui';
import { NAME_MAX } from '../field-rules';
import { formatDate, formatNumber, splitList, toLocalInput, toUnix } from '../format';
import { useAsync, useDocumentTitle } from '../hooks';
import { forgetKey, rememberKey } from '../keystore';
import { Link } from '../router';
import { useRowBusy } from '../row-busy';
import { type ApiKey, type ModelEntry, ROLE, type User } from '../types';
import { unmatchedWarning } from './keys/allowed-models';

const PAGE_SIZE = 20;
/** The largest rate limit the server takes (a 32-bit column). */
const INT32_MAX = 2_147_483_647;

const FIELDS: FieldSpec[] = [
  {
    name: 'name',
    label: 'Name',
    required: true,
    maxLength: NAME_MAX,
    placeholder: 'e.g. laptop, CI, my-app',
  },
  QUOTA_FIELD,
  { name: 'expires_time', label: 'Expires', type: 'datetime', future: true, hint: 'Empty means never.' },
  {
    name: 'rpm_limit',
    label: 'Requests per minute',
    type: 'number',
    min: 1,
    max: INT32_MAX,
    integer: true,
    hint: 'Empty means no limit.',
  },
  {
    name: 'tpm_limit',
    label: 'Tokens per minute',
    type: 'number',
    min: 1,
    max: INT32_MAX,
    integer: true,
    hint: 'Empty means no limit.',
  },
  {
    name: 'allowed_models',
    label: 'Allowed models',
    wide: true,
    placeholder: 'openai/gpt-4o-mini, anthropic/claude-sonnet-4',
    hint: 'Comma-separated model ids or names; one ending in * allows every model whose id starts so (openai/*), and a * elsewhere is refused. Empty allows every model.',
  },
];

const LIMITS = new Set(['quota_limit', 'expires_time', 'rpm_limit', 'tpm_limit', 'allowed_models']);

/**
 * The form's fields. For an owner whose key an admin manages, the limits are shown read-only: the
 * server refuses to loosen them (403), and a form that offers it only leads there.
 */
function fieldsFor(held: boolean): FieldSpec[] {
  if (!held) return FIELDS;
  return FIELDS.map((f) =>
    LIMITS.has(f.name)
      ? {
          ...f,
          disabled: true,
          placeholder: undefined,
          hint: `Set by an administrator. ${f.hint ?? ''}`.trim(),
        }
      : f,
  );
}

/** Whether the signed-in user owns `k` and an admin holds its limits (a root answers to no one). */
function heldFor(k: ApiKey | undefined, user: User | null): boolean {
  return !!k?.admin_managed && !!user && k.user_id === user.id && user.role < ROLE.root;
}

function expiry(k?: ApiKey): number | null {
  return k?.expires_time ?? k?.expires_at ?? null;
}

function toValues(k?: ApiKey): FormValues {
  return {
    name: k?.name ?? '',
    quota_limit: k?.quota_limit == null ? '' : String(k.quota_limit),
    expires_time: toLocalInput(expiry(k)),
    rpm_limit: k?.rpm_limit == null ? '' : String(k.rpm_limit),
    tpm_limit: k?.tpm_limit == null ? '' : String(k.tpm_limit),
    allowed_models: (k?.allowed_models ?? []).join(', '),
  };
}

function toBody(v: FormValues): Record<string, unknown> {
  const models = splitList(str(v.allowed_models));
  return {
    name: str(v.name),
    quota_limit: numOrNull(v.quota_limit),
    expires_time: toUnix(str(v.expires_time)),
    rpm_limit: numOrNull(v.rpm_limit),
    tpm_limit: numOrNull(v.tpm_limit),
    allowed_models: models.length ? models : null,
  };
}

export function Keys() {
  useDocumentTitle('API keys');
  const { user, refresh } = useAuth();
  // An admin manages the user's keys (users.keys_admin_managed): new ones come from an admin.
  // The mark as it is now, not as the tab read it at sign-in: read once per opening, as Account.
  const keysHeld = !!user?.keys_admin_managed && user.role < ROLE.root;
  const read = useRef(false);
  useEffect(() => {
    if (read.current) return;
    read.current = true;
    void refresh();
  }, [refresh]);
  const [page, setPage] = useState(0);
  // The page is the user's own keys; an administrator may list everyone's (the API's default
  // for them), shown with their owners so no one mistakes another user's key for their own.
  const [everyone, setEveryone] = useState(false);
  const list = useAsync(
    () =>
      api.page<ApiKey>('/key', { p: page, page_size: PAGE_SIZE, user_id: everyone ? undefined : user?.id }),
    [page, everyone, user?.id],
  );
  // The owners by id, for every user's keys: a key row carries only its owner's id.
  const owners = useAsync(() => (everyone ? api.all<User>('/user') : Promise.resolve(undefined)), [everyone]);
  // The keys whose enable/disable is in flight: a second click would send the same PUT again.
  const toggling = useRowBusy(list.data);
  const [editing, setEditing] = useState<ApiKey | 'new' | null>(null);
  const [deleting, setDeleting] = useState<ApiKey | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<string | null>(null);
  const current = editing === 'new' ? undefined : (editing ?? undefined);
  // The registry, while the form is open: an allowed model no model answers to is said under the
  // field, and still saved (the key may name a model before an upstream serves it).
  const open = editing !== null;
  const models = useAsync(() => (open ? api.all<ModelEntry>('/model') : Promise.resolve(undefined)), [open]);
  const fields = fieldsFor(heldFor(current, user)).map((f) =>
    f.name === 'allowed_models' && !f.disabled
      ? { ...f, warn: (v: string) => unmatchedWarning(splitList(v), models.data) }
      : f,
  );

  async function save(v: FormValues) {
    setNotice('');
    setError(null);
    const body = toBody(v);
    if (current) {
      // Only what was changed in the form: a limit an administrator set while the form was open
      // (a lower quota, fewer models) is not put back by a rename, and an expiry the form shows
      // to the minute keeps its seconds.
      const opened = toBody(toValues(current));
      const changed = Object.fromEntries(
        Object.entries(body).filter(([k, val]) => JSON.stringify(val) !== JSON.stringify(opened[k])),
      );
      await api.put('/key', { id: current.id, ...changed });
      setNotice(`Saved key “${body.name}”.`);
    } else {
      const k = await api.post<ApiKey & { key: string }>('/key', body);
      rememberKey(k.id, k.name, k.key_prefix, k.key);
      setCreated({ name: k.name, key: k.key });
    }
    setEditing(null);
    list.reload();
  }

  async function toggle(k: ApiKey) {
    if (toggling.has(k.id)) return;
    setError(null);
    setNotice('');
    try {
      await toggling.run(k.id, () => api.put('/key', { id: k.id, status: k.status === 2 ? 1 : 2 }));
      setNotice(`Key “${k.name}” ${k.status === 2 ? 'enabled' : 'disabled'}.`);
      list.reload();
    } catch (e) {
      setError(errorText(e));
    }
  }

  function ownerLabel(k: ApiKey) {
    if (k.user_id === user?.id) return 'You';
    const owner = owners.data?.find((u) => u.id === k.user_id);
    if (!owner) return `User #${k.user_id}`;
    return (
      <>
        {owner.username}
        {owner.display_name && owner.display_name !== owner.username && (
          <div className="meta">{owner.display_name}</div>
        )}
      </>
    );
  }

  async function remove() {
    setNotice('');
    setError(null);
    if (!deleting) return;
    const was = await api.delRow(`/key/${deleting.id}`);
    // The playground must not offer (nor fill in) a secret that no longer opens anything.
    forgetKey(deleting.id, deleting.key_prefix);
    setNotice(was ? `Deleted key “${deleting.name}”.` : `Key “${deleting.name}” was already deleted.`);
    setDeleting(null);
    list.reload();
  }

  return (
    <>
      <div className="page-head">
        <h1>API keys</h1>
        <button
          type="button"
          className="btn btn-primary"
          onClick={() => setEditing('new')}
          disabled={keysHeld}
          aria-describedby={keysHeld ? 'keys-held-why' : undefined}
        >
          New API key
        </button>
      </div>
      {/* Said before the form is filled in: the server refuses their own new key (403). */}
      {keysHeld && (
        <p id="keys-held-why" className="meta prose">
          An administrator manages your API keys: ask one for a new key.
        </p>
      )}
      <p className="meta prose">
        Use a key as <code>Authorization: Bearer sk-…</code> on <code>/v1</code>. Try one in the{' '}
        <Link to="/playground">playground</Link>.
      </p>
      {isAdmin(user) && (
        <div className="field-check">
          <input
            id="keys-everyone"
            type="checkbox"
            checked={everyone}
            onChange={(e) => {
              setEveryone(e.target.checked);
              setPage(0);
            }}
          />
          <label htmlFor="keys-everyone">Show every user's keys</label>
        </div>
      )}
      <Notice>{notice}</Notice>
      <ErrorBox error={error} />
      {list.loading && !list.data && <Spinner />}
      <ErrorBox error={list.error} onRetry={list.reload} />
      {/* A page past the end (its last key deleted) is said by the pager, not "No API keys yet". */}
      {list.data?.total === 0 && <Empty title="No API keys yet">Create one to call the gateway.</Empty>}
      {!!list.data?.items.length && (
        <TableWrap caption={everyone ? "Every user's API keys" : 'Your API keys'}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              {everyone && <th scope="col">Owner</th>}
              <th scope="col">Status</th>
              <th scope="col">Quota</th>
              <th scope="col">Limits</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((k) => (
              <tr key={k.id}>
                <th scope="row">
                  {k.name}
                  <div className="meta mono">{k.key_prefix.replace(/…$/, '')}…</div>
                  {k.allowed_models?.length ? (
                    <div className="meta">Models: {k.allowed_models.join(', ')}</div>
                  ) : null}
                  <div className="meta">
                    {k.last_used_time ? `Last used ${formatDate(k.last_used_time)}` : 'Never used'}
                  </div>
                  {k.admin_managed && (
                    <div className="meta">
                      {k.admin_disabled ? 'Disabled by an administrator' : 'Limits set by an administrator'}
                    </div>
                  )}
                </th>
                {everyone && <td>{ownerLabel(k)}</td>}
                <td>
                  <StatusBadge status={k.status} />
                  {k.user_quota_exhausted && k.status === 1 && (
                    <div className="meta">
                      {user && k.user_id === user.id ? 'Your' : "Its owner's"} quota is used up: calls get 402
                    </div>
                  )}
                </td>
                <td>
                  <Quota used={k.quota_used} limit={k.quota_limit} />
                </td>
                <td>
                  {k.rpm_limit ? `${formatNumber(k.rpm_limit)} rpm` : '—'}
                  <br />
                  {k.tpm_limit ? `${formatNumber(k.tpm_limit)} tpm` : ''}
                </td>
                <td>{expiry(k) ? formatDate(expiry(k)) : 'Never'}</td>
                <td className="actions">
                  <RowAction verb="Edit" of={k.name} onClick={() => setEditing(k)} />
                  {/* Expired (3) and exhausted (4) keys are enabled ones that cannot be used now: a
                      new expiry or quota makes them usable again, so they can be disabled too. */}
                  {(k.status !== 2 || !(k.admin_disabled && heldFor(k, user))) && (
                    <RowAction
                      verb={k.status === 2 ? 'Enable' : 'Disable'}
                      of={k.name}
                      disabled={toggling.has(k.id)}
                      onClick={() => toggle(k)}
                    />
                  )}
                  <RowAction verb="Delete" of={k.name} danger onClick={() => setDeleting(k)} />
                </td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}

      <Modal
        title={current ? `Edit ${current.name}` : 'New API key'}
        open={editing !== null}
        onClose={() => setEditing(null)}
        wide
      >
        {editing !== null && (
          <SpecForm
            key={current?.id ?? 'new'}
            fields={fields}
            initial={toValues(current)}
            submitLabel={current ? 'Save changes' : 'Create key'}
            onSubmit={save}
            onCancel={() => setEditing(null)}
          />
        )}
      </Modal>
      <SecretDialog
        title="Your new API key"
        label="Secret key"
        secret={created && { name: created.name, value: created.key }}
        onClose={() => setCreated(null)}
      >
        <Link to="/playground" className="btn" onClick={() => setCreated(null)}>
          Try it in the playground
        </Link>
      </SecretDialog>
      <Confirm
        open={deleting !== null}
        title="Delete API key?"
        message={`Requests using “${deleting?.name ?? ''}” will be refused at once.`}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}

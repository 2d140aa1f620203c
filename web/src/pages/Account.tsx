import { useEffect, useRef, useState } from 'react';
import { api } from '../api';
import { useAuth } from '../auth';
import { Quota } from '../components/Quota';
import { SecretDialog } from '../components/SecretDialog';
import { type FieldSpec, type FormValues, SpecForm, str } from '../components/SpecForm';
import { Confirm, Empty, ErrorBox, Modal, Notice, RowAction, Spinner, TableWrap } from '../components/ui';
import { NAME_MAX } from '../field-rules';
import { formatDate, toUnix } from '../format';
import { useAsync, useDocumentTitle } from '../hooks';
import type { ModelEntry } from '../types';

interface AccessToken {
  id: number;
  name: string;
  token_prefix: string;
  created_time: number;
  expires_time: number | null;
  last_used_time: number | null;
}

const PASSWORD_FIELDS: FieldSpec[] = [
  {
    name: 'current_password',
    label: 'Current password',
    type: 'password',
    required: true,
    autoComplete: 'current-password',
  },
  {
    name: 'password',
    label: 'New password',
    type: 'password',
    required: true,
    autoComplete: 'new-password',
    minLength: 8,
    maxLength: 256,
    hint: 'At least 8 characters.',
  },
];

const TOKEN_FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Name', required: true, maxLength: NAME_MAX, placeholder: 'e.g. deploy script' },
  { name: 'expires_time', label: 'Expires', type: 'datetime', future: true, hint: 'Empty means never.' },
];

/** The signed-in user's own settings and personal access tokens (for scripts calling /api). */
export function Account() {
  useDocumentTitle('Account');
  const { user, refresh } = useAuth();
  // Every model the user can call (an enabled channel serves it, as GET /v1/models lists): the
  // chooser must offer them all, not the first page, and none a request would be refused for.
  const models = useAsync(() => api.all<ModelEntry>('/model', { servable: true }), []);
  const tokens = useAsync(() => api.get<AccessToken[]>('/user/tokens'), []);
  const [notice, setNotice] = useState('');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [revoking, setRevoking] = useState<AccessToken | null>(null);
  // A new form (empty fields) after each change of password: the old and new ones must not stay.
  const [passwordForm, setPasswordForm] = useState(0);
  // The signed-in user as it is now: the one the tab read at sign-in (or load) showed the spend of
  // that moment, whatever was spent since. Once per opening (React's development check runs the
  // effect twice on mount; the read already started answers it).
  const read = useRef(false);
  useEffect(() => {
    if (read.current) return;
    read.current = true;
    void refresh();
  }, [refresh]);
  if (!user) return null;

  // Without the model list the chooser cannot offer the models, nor show the setting as chosen
  // among them: it keeps the current setting, unchangeable until the list loads (Try again).
  const list = models.data;
  const listed = list !== undefined;
  const current = user.default_model ?? '';
  const profileFields: FieldSpec[] = [
    { name: 'display_name', label: 'Display name', maxLength: NAME_MAX },
    {
      name: 'default_model',
      label: 'Default model',
      type: 'select',
      disabled: !listed,
      hint: listed
        ? 'Used when a request names no model.'
        : 'The model list could not be loaded: the current setting is kept. Try again to change it.',
      options: list
        ? [
            ['', 'None (the server default)'],
            ...list.map((m): [string, string] => [m.id, `${m.name} (${m.id})`]),
            // A setting naming a model no channel serves now stays visible (and kept), marked.
            ...(current && !list.some((m) => m.id === current)
              ? [[current, `${current} (not served now)`] as [string, string]]
              : []),
          ]
        : [[current, current || 'None (the server default)']],
    },
  ];

  async function saveProfile(v: FormValues) {
    setNotice('');
    // The default model goes only when it could be chosen from the list: never blanked unseen.
    await api.put('/user/self', {
      display_name: str(v.display_name),
      ...(listed ? { default_model: str(v.default_model) } : {}),
    });
    await refresh();
    setNotice(listed ? 'Settings saved.' : 'Settings saved; the default model was kept as it was.');
  }

  async function changePassword(v: FormValues) {
    setNotice('');
    // As typed: a password may begin or end with a space.
    await api.put('/user/self', { current_password: v.current_password, password: v.password });
    setPasswordForm((n) => n + 1);
    setNotice('Password changed.');
  }

  async function createToken(v: FormValues) {
    setNotice('');
    const t = await api.post<AccessToken & { token: string }>('/user/tokens', {
      name: str(v.name),
      expires_time: toUnix(str(v.expires_time)),
    });
    setCreating(false);
    setCreated({ name: t.name, token: t.token });
    tokens.reload();
  }

  async function revoke() {
    setNotice('');
    if (!revoking) return;
    const was = await api.delRow(`/user/tokens/${revoking.id}`);
    setNotice(was ? `Revoked token “${revoking.name}”.` : `Token “${revoking.name}” was already revoked.`);
    setRevoking(null);
    tokens.reload();
  }

  return (
    <>
      <h1>Account</h1>
      <Notice>{notice}</Notice>
      <section className="card account-section" aria-labelledby="profile-h">
        <h2 id="profile-h">Profile</h2>
        <ErrorBox
          error={models.error && `The model list could not be loaded: ${models.error}`}
          onRetry={models.reload}
        />
        {models.loading && !models.data ? (
          <Spinner label="Loading models…" />
        ) : (
          <SpecForm
            key={`${user.id}-${list ? list.length : 'unlisted'}`}
            fields={profileFields}
            initial={{ display_name: user.display_name ?? '', default_model: user.default_model ?? '' }}
            submitLabel="Save settings"
            onSubmit={saveProfile}
          />
        )}
      </section>
      <section className="card account-section" aria-labelledby="quota-h">
        <h2 id="quota-h">Quota</h2>
        <p className="meta prose">
          What you may spend in USD across all your API keys; an administrator sets it.
        </p>
        <Quota used={user.quota_used ?? 0} limit={user.quota_limit ?? null} />
      </section>
      <section className="card account-section" aria-labelledby="password-h">
        <h2 id="password-h">Password</h2>
        <SpecForm
          key={passwordForm}
          fields={PASSWORD_FIELDS}
          initial={{}}
          submitLabel="Change password"
          onSubmit={changePassword}
        />
      </section>
      <section className="card account-section" aria-labelledby="tokens-h">
        <div className="page-head">
          <h2 id="tokens-h">Access tokens</h2>
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            New access token
          </button>
        </div>
        <p className="meta prose">
          For scripts that call the management API: send <code>Authorization: Bearer mgt-…</code> to{' '}
          <code>/api</code>. They act as you; API keys (for <code>/v1</code>) are on the API keys page.
        </p>
        {tokens.loading && !tokens.data && <Spinner />}
        <ErrorBox error={tokens.error} onRetry={tokens.reload} />
        {tokens.data?.length === 0 && <Empty title="No access tokens">Create one for a script.</Empty>}
        {!!tokens.data?.length && (
          <TableWrap caption="Your access tokens">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((t) => (
                <tr key={t.id}>
                  <th scope="row">
                    {t.name}
                    <div className="meta mono">{t.token_prefix}…</div>
                  </th>
                  <td>{formatDate(t.created_time)}</td>
                  <td>{t.last_used_time ? formatDate(t.last_used_time) : 'Never'}</td>
                  <td>{t.expires_time ? formatDate(t.expires_time) : 'Never'}</td>
                  <td className="actions">
                    <RowAction verb="Revoke" of={t.name} danger onClick={() => setRevoking(t)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
      </section>
      <Modal title="New access token" open={creating} onClose={() => setCreating(false)}>
        {creating && (
          <SpecForm
            fields={TOKEN_FIELDS}
            initial={{ name: '', expires_time: '' }}
            submitLabel="Create token"
            onSubmit={createToken}
            onCancel={() => setCreating(false)}
          />
        )}
      </Modal>
      <SecretDialog
        title="Your new access token"
        label="Access token"
        secret={created && { name: created.name, value: created.token }}
        onClose={() => setCreated(null)}
      />
      <Confirm
        open={revoking !== null}
        title="Revoke access token?"
        message={`Scripts using “${revoking?.name ?? ''}” will be refused at once.`}
        confirmLabel="Revoke"
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      />
    </>
  );
}

import { type FormEvent, useState } from 'react';
import { errorText } from '../api';
import { useAuth } from '../auth';
import { ErrorBox, Field } from '../components/ui';
import { useDocumentTitle } from '../hooks';
import { localTarget, navigate, useLocation } from '../router';

export function SignIn() {
  useDocumentTitle('Sign in');
  const { login, user } = useAuth();
  const { query } = useLocation();
  const target = localTarget(query.get('next'));
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(username.trim(), password);
      navigate(target, { replace: true });
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="narrow">
      <h1>Sign in</h1>
      {user && <p className="meta">You are signed in as {user.username}.</p>}
      <form className="card form" onSubmit={submit} aria-describedby="signin-error">
        <Field label="Username">
          {(p) => (
            <input
              {...p}
              name="username"
              autoComplete="username"
              required
              value={username}
              onChange={(e) => setUsername(e.target.value)}
            />
          )}
        </Field>
        <Field label="Password">
          {(p) => (
            <input
              {...p}
              name="password"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <div id="signin-error" aria-live="assertive">
          <ErrorBox error={error} />
        </div>
        <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}

import { type FormEvent, useEffect, useRef, useState } from 'react';
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
  // Said under the field, as the other forms say it, rather than in the browser's own bubble.
  const [missing, setMissing] = useState<{ username?: string; password?: string }>({});
  const usernameRef = useRef<HTMLInputElement>(null);
  const passwordRef = useRef<HTMLInputElement>(null);

  // The page is for typing a name: it starts there.
  useEffect(() => usernameRef.current?.focus(), []);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const empty = {
      username: username.trim() ? undefined : 'Username is required.',
      password: password ? undefined : 'Password is required.',
    };
    setMissing(empty);
    if (empty.username || empty.password) {
      (empty.username ? usernameRef : passwordRef).current?.focus();
      return;
    }
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
      <form className="card form" onSubmit={submit} aria-describedby="signin-error" noValidate>
        <Field label="Username" error={missing.username}>
          {(p) => (
            <input
              {...p}
              ref={usernameRef}
              name="username"
              autoComplete="username"
              required
              value={username}
              onChange={(e) => setUsername(e.target.value)}
            />
          )}
        </Field>
        <Field label="Password" error={missing.password}>
          {(p) => (
            <input
              {...p}
              ref={passwordRef}
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

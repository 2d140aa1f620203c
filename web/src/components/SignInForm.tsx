import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { errorText } from '../api';
import { useAuth } from '../auth';
import { ErrorBox, Field } from './ui';

/**
 * The username and password fields, their missing-field checks and the sign-in call, shared by
 * the Sign in page and the "session has ended" dialog so the two cannot drift apart.
 * `onSignedIn` runs once the session is made; `autoFocus` starts on the username (a page, not a
 * dialog, which focuses its own first field); `before` and `actions` are what the caller shows
 * above the fields and beside the Sign in button.
 */
export function SignInForm({
  initialUsername = '',
  autoFocus = false,
  onSignedIn,
  className,
  before,
  actions,
  block = false,
}: {
  initialUsername?: string;
  autoFocus?: boolean;
  onSignedIn?(): void;
  className?: string;
  before?: ReactNode;
  actions?: ReactNode;
  block?: boolean;
}) {
  const { login } = useAuth();
  const [username, setUsername] = useState(initialUsername);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Said under the field, as the other forms say it, rather than in the browser's own bubble.
  const [missing, setMissing] = useState<{ username?: string; password?: string }>({});
  const usernameRef = useRef<HTMLInputElement>(null);
  const passwordRef = useRef<HTMLInputElement>(null);
  const errorId = useId();

  useEffect(() => {
    if (autoFocus) usernameRef.current?.focus();
  }, [autoFocus]);

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
      onSignedIn?.();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  const button = (
    <button type="submit" className={`btn btn-primary${block ? ' btn-block' : ''}`} disabled={busy}>
      {busy ? 'Signing in…' : 'Sign in'}
    </button>
  );
  return (
    <form
      className={className ? `${className} form` : 'form'}
      onSubmit={submit}
      aria-describedby={errorId}
      noValidate
    >
      {before}
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
      <div id={errorId} aria-live="assertive">
        <ErrorBox error={error} />
      </div>
      {actions ? (
        <div className="form-actions">
          {actions}
          {button}
        </div>
      ) : (
        button
      )}
    </form>
  );
}

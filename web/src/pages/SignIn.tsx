import { useAuth } from '../auth';
import { SignInForm } from '../components/SignInForm';
import { useDocumentTitle } from '../hooks';
import { localTarget, navigate, useLocation } from '../router';

export function SignIn() {
  useDocumentTitle('Sign in');
  const { user } = useAuth();
  const { query } = useLocation();
  const target = localTarget(query.get('next'));

  return (
    <div className="narrow">
      <h1>Sign in</h1>
      {user && <p className="meta">You are signed in as {user.username}.</p>}
      {/* The page is for typing a name: it starts there. */}
      <SignInForm className="card" autoFocus block onSignedIn={() => navigate(target, { replace: true })} />
    </div>
  );
}

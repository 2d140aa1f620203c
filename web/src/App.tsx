import { Component, Fragment, lazy, type ReactNode, Suspense, useEffect, useRef, useState } from 'react';
import type { AdminPage, SignedInPage } from '../../src/http/console-pages';
import { isAdmin, ShownAs, useAuth } from './auth';
import { Layout } from './components/Layout';
import { SignInForm } from './components/SignInForm';
import { Empty, ErrorBox, Modal, Spinner } from './components/ui';
import { useDocumentTitle } from './hooks';
import { AppDetail } from './pages/AppDetail';
import { Home } from './pages/Home';
import { SearchPage } from './pages/SearchPage';
import { SignIn } from './pages/SignIn';
import { Link, match, signInHref, useLocation } from './router';

// Signed-in pages load on demand so a visitor of the catalog never downloads them.
const Playground = lazy(() => import('./pages/Playground').then((m) => ({ default: m.Playground })));
const Keys = lazy(() => import('./pages/Keys').then((m) => ({ default: m.Keys })));
const Logs = lazy(() => import('./pages/Logs').then((m) => ({ default: m.Logs })));
const Usage = lazy(() => import('./pages/Usage').then((m) => ({ default: m.Usage })));
const Account = lazy(() => import('./pages/Account').then((m) => ({ default: m.Account })));
const AdminApps = lazy(() => import('./pages/admin/AdminApps').then((m) => ({ default: m.AdminApps })));
const Upstreams = lazy(() => import('./pages/admin/Upstreams').then((m) => ({ default: m.Upstreams })));
const Models = lazy(() => import('./pages/admin/Models').then((m) => ({ default: m.Models })));
const Users = lazy(() => import('./pages/admin/Users').then((m) => ({ default: m.Users })));

function RequireUser({ admin, children }: { admin?: boolean; children: ReactNode }) {
  const { user, loading, error, refresh, expired } = useAuth();
  const location = useLocation();
  /** Whom the page was shown to: it stays theirs while they sign in again. */
  const owner = useRef<number | null>(null);
  if (loading) return <Spinner label="Checking your session…" />;
  // The session ended under the page (a save answered 401): the page stays as it was, what was
  // typed included, behind a dialog to sign in again; then the save can be sent once more.
  const resuming = !user && expired !== null && owner.current === expired.id;
  if (!resuming) {
    if (!user && error) return <SessionUnknown error={error} retry={refresh} />;
    if (!user) return <SignInRequired href={signInHref(location)} />;
    if (admin && !isAdmin(user)) return <AdminsOnly />;
    owner.current = user.id;
  }
  // Keyed by the user: someone else signing in gets the page afresh, never the last one's data.
  return (
    <>
      <ShownAs user={resuming ? expired : user}>
        <Fragment key={owner.current}>{children}</Fragment>
      </ShownAs>
      {resuming && <SignInAgain username={expired.username} />}
    </>
  );
}

/** Sign in again without leaving the page whose session ended; giving up shows Sign in required. */
function SignInAgain({ username }: { username: string }) {
  const { dismissExpired } = useAuth();
  return (
    <Modal title="Your session has ended" open onClose={dismissExpired}>
      <SignInForm
        initialUsername={username}
        before={
          <p>
            Sign in again to carry on. What you entered on this page is kept: send it again once signed in.
          </p>
        }
        actions={
          <button type="button" className="btn" onClick={dismissExpired}>
            Not now
          </button>
        }
      />
    </Modal>
  );
}

/** The session could not be read: said so, with a retry, rather than "Sign in required". */
function SessionUnknown({ error, retry }: { error: string; retry(): Promise<void> }) {
  useDocumentTitle('Session not checked');
  const [busy, setBusy] = useState(false);
  if (busy) return <Spinner label="Checking your session…" />;
  return (
    <ErrorBox
      error={`Your session could not be checked: ${error}`}
      onRetry={() => {
        setBusy(true);
        void retry().finally(() => setBusy(false));
      }}
    />
  );
}

// Pages that are not shown name themselves in the tab too, instead of keeping the last title.
function SignInRequired({ href }: { href: string }) {
  useDocumentTitle('Sign in required');
  return (
    <Empty title="Sign in required">
      <p>
        This page is for signed-in users. <Link to={href}>Sign in</Link>
      </p>
    </Empty>
  );
}

function AdminsOnly() {
  useDocumentTitle('Administrators only');
  return <Empty title="Administrators only">Your account does not have access to this page.</Empty>;
}

function route(path: string): ReactNode {
  if (path === '/' || path === '') return <Home />;
  if (path === '/apps') return <SearchPage />;
  const app = match('/app/:id', path);
  if (app) return <AppDetail id={app.id} />;
  if (path === '/login') return <SignIn />;
  // Typed by the gateway's list of pages, which answers any other path with a 404.
  const signedIn: Record<SignedInPage, ReactNode> = {
    '/playground': <Playground />,
    '/keys': <Keys />,
    '/logs': <Logs />,
    '/usage': <Usage />,
    '/account': <Account />,
  };
  if (Object.hasOwn(signedIn, path)) return <RequireUser>{signedIn[path as SignedInPage]}</RequireUser>;
  const admin: Record<AdminPage, ReactNode> = {
    '/admin/apps': <AdminApps />,
    '/admin/upstreams': <Upstreams />,
    '/admin/models': <Models />,
    '/admin/users': <Users />,
  };
  if (Object.hasOwn(admin, path)) return <RequireUser admin>{admin[path as AdminPage]}</RequireUser>;
  return <NotFound path={path} />;
}

function NotFound({ path }: { path: string }) {
  // Without a title of its own the tab kept the previous page's.
  useDocumentTitle('Page not found');
  return (
    <Empty title="Page not found">
      <p>
        Nothing lives at <code>{path}</code>. <Link to="/">Back to the catalog</Link>
      </p>
    </Empty>
  );
}

/**
 * A page that failed to load or render (a chunk a redeploy removed, a network error) shows
 * what happened and a reload instead of a blank page. Keyed by path: another page starts clean.
 */
class PageBoundary extends Component<{ children: ReactNode }, { failed: boolean }> {
  state = { failed: false };
  static getDerivedStateFromError() {
    return { failed: true };
  }
  render() {
    if (!this.state.failed) return this.props.children;
    return (
      <Empty title="This page could not be loaded">
        <p>The console may have been updated, or the connection dropped.</p>
        <button type="button" className="btn btn-primary" onClick={() => window.location.reload()}>
          Reload
        </button>
      </Empty>
    );
  }
}

export function App() {
  const { path } = useLocation();
  const main = useRef<HTMLElement>(null);
  const shown = useRef(path);

  // Move focus to the new page so keyboard and screen-reader users land on its content;
  // never on the first load, where focus belongs to the top of the document.
  useEffect(() => {
    if (shown.current === path) return;
    shown.current = path;
    main.current?.focus({ preventScroll: true });
  }, [path]);

  return (
    <Layout mainRef={main}>
      <PageBoundary key={path}>
        <Suspense fallback={<Spinner label="Loading page…" />}>{route(path)}</Suspense>
      </PageBoundary>
    </Layout>
  );
}

import { type ReactNode, type RefObject, useEffect, useRef, useState } from 'react';
import { errorText } from '../api';
import { isAdmin, roleName, useAuth } from '../auth';
import { Link, navigate, signInHref, useLocation } from '../router';

function NavLink({ to, children }: { to: string; children: ReactNode }) {
  const { path } = useLocation();
  const active = to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`);
  return (
    <Link to={to} className={`nav-link${active ? ' active' : ''}`} aria-current={active ? 'page' : undefined}>
      {children}
    </Link>
  );
}

export function Layout({
  children,
  mainRef,
}: {
  children: ReactNode;
  mainRef: RefObject<HTMLElement | null>;
}) {
  const { user, logout } = useAuth();
  const location = useLocation();
  const { path } = location;
  const [open, setOpen] = useState(false);

  // biome-ignore lint/correctness/useExhaustiveDependencies: close the phone menu after navigating
  useEffect(() => setOpen(false), [path]);

  // Escape folds the open phone menu and puts focus back on its button, as for a disclosure.
  const toggle = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    function onKey(e: KeyboardEvent) {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      setOpen(false);
      toggle.current?.focus();
    }
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);

  const [signOutError, setSignOutError] = useState<string | null>(null);
  async function signOut() {
    setSignOutError(null);
    try {
      await logout();
      navigate('/');
    } catch (e) {
      // Still signed in: the server did not end the session. Said, and the button stays.
      setSignOutError(`Sign-out failed: ${errorText(e)}`);
    }
  }

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>{' '}
          modelgate
        </Link>
        <button
          ref={toggle}
          type="button"
          className="btn btn-ghost menu-toggle"
          aria-expanded={open}
          aria-controls="primary-nav"
          onClick={() => setOpen((o) => !o)}
        >
          Menu
        </button>
        <nav id="primary-nav" className={`nav${open ? ' open' : ''}`} aria-label="Main">
          <div className="nav-group">
            <NavLink to="/">Catalog</NavLink>
            <NavLink to="/apps">Browse</NavLink>
            {user && (
              <>
                <NavLink to="/playground">Playground</NavLink>
                <NavLink to="/keys">API keys</NavLink>
                <NavLink to="/logs">Logs</NavLink>
                <NavLink to="/usage">Usage</NavLink>
              </>
            )}
          </div>
          {isAdmin(user) && (
            <div className="nav-group">
              <span className="nav-label">Admin</span>
              <NavLink to="/admin/apps">Apps</NavLink>
              <NavLink to="/admin/upstreams">Upstreams</NavLink>
              <NavLink to="/admin/models">Models</NavLink>
              <NavLink to="/admin/users">Users</NavLink>
            </div>
          )}
          <div className="nav-group nav-user">
            {user ? (
              <>
                <NavLink to="/account">
                  <span className="who">
                    {/* A long name is cut with an ellipsis; the whole one stays in the text and the tooltip. */}
                    <span className="who-name" title={user.display_name || user.username}>
                      {user.display_name || user.username}
                    </span>{' '}
                    <span className="badge badge-muted">{roleName(user.role)}</span>
                  </span>
                </NavLink>
                <button type="button" className="btn btn-small" onClick={signOut}>
                  Sign out
                </button>
                {signOutError && (
                  <span role="alert" className="field-error">
                    {signOutError}
                  </span>
                )}
              </>
            ) : (
              <Link to={signInHref(location)} className="btn btn-primary btn-small">
                Sign in
              </Link>
            )}
          </div>
        </nav>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1} className="main">
        {children}
      </main>
      <footer className="footer">modelgate · self-hosted AI model gateway and app catalog</footer>
    </div>
  );
}

import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { ApiError, api, errorText, SIGNED_OUT } from './api';
import { forgetKeys } from './keystore';
import { ROLE, type User } from './types';

interface AuthState {
  user: User | null;
  /** True until the first /api/user/session answer arrives. */
  loading: boolean;
  /**
   * Why the session could not be read (the gateway down, a 5xx), or null: not knowing who is
   * signed in is not being signed out. Cleared by the next answer.
   */
  error: string | null;
  /**
   * The user whose session ended under them (a call answered 401), until they sign in again or
   * give up: the page they were on stays, with what they typed, behind a sign-in dialog.
   */
  expired: User | null;
  /** Gives up signing in again: the page then says sign-in is required, as for anyone. */
  dismissExpired(): void;
  login(username: string, password: string): Promise<User>;
  logout(): Promise<void>;
  refresh(): Promise<void>;
}

const AuthContext = createContext<AuthState | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<User | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [expired, setExpired] = useState<User | null>(null);
  /**
   * Bumped by every sign-in and sign-out: a session read that started before one of them answers
   * for the state before it, and must not overwrite what it did (a slow first read landing after
   * the user signed in would sign them out on screen).
   */
  const changes = useRef(0);
  /** Who the tab shows signed in, for a sign-in to tell whether someone else is taking over. */
  const shown = useRef<User | null>(null);
  shown.current = user;

  const refresh = useCallback(async () => {
    const at = changes.current;
    try {
      // Signed out is a 200 with null here: a 401 from /user/self would be logged by the
      // browser on every anonymous page load.
      const u = await api.get<User | null>('/user/session');
      if (at === changes.current) {
        setUser(u);
        setError(null);
      }
    } catch (e) {
      if (at !== changes.current) return;
      if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
        setUser(null);
        setError(null);
      } else setError(errorText(e));
    } finally {
      setLoading(false);
    }
  }, []);

  // Once per provider: React's development check (StrictMode mounts, unmounts and mounts every
  // effect once more) ran this twice, so a development build asked for the session twice on
  // every load where a production build asks once. The read already started answers both.
  const read = useRef(false);
  useEffect(() => {
    if (read.current) return;
    read.current = true;
    void refresh();
  }, [refresh]);

  useEffect(() => {
    const gone = () => {
      changes.current++;
      forgetKeys();
      const was = shown.current;
      if (was) setExpired(was);
      setUser(null);
      setError(null);
    };
    window.addEventListener(SIGNED_OUT, gone);
    return () => window.removeEventListener(SIGNED_OUT, gone);
  }, []);

  const login = useCallback(async (username: string, password: string) => {
    const u = await api.post<User>('/user/login', { username, password });
    changes.current++;
    setError(null);
    // Some servers answer login with a partial record: read the full one.
    let full = u;
    try {
      full = await api.get<User>('/user/self');
    } catch {
      // keep what login returned
    }
    // Someone other than the user the tab knew (or a tab that knew no one: the session may have
    // ended unseen) signs in without signing out first: the key secrets the tab holds, the
    // playground's remembered one included, are not theirs to be offered, nor billed to.
    if (shown.current?.id !== full.id) forgetKeys();
    setUser(full);
    setExpired(null);
    return full;
  }, []);

  // Signed out only once the server says so: a failed sign-out (the network, a 5xx) leaves the
  // session cookie valid, so the page must not look signed out while it is not. Key secrets
  // held in the tab go either way.
  const logout = useCallback(async () => {
    forgetKeys();
    await api.post('/user/logout');
    changes.current++;
    setUser(null);
    setExpired(null);
    setError(null);
  }, []);

  const dismissExpired = useCallback(() => setExpired(null), []);

  return (
    <AuthContext.Provider value={{ user, loading, error, expired, dismissExpired, login, logout, refresh }}>
      {children}
    </AuthContext.Provider>
  );
}

/**
 * Shows `children` the signed-in user `user` (the one whose session just ended, while they sign
 * in again), the rest of the auth state as it is.
 */
export function ShownAs({ user, children }: { user: User | null; children: ReactNode }) {
  const ctx = useAuth();
  return (
    <AuthContext.Provider value={ctx.user === user ? ctx : { ...ctx, user }}>{children}</AuthContext.Provider>
  );
}

export function useAuth(): AuthState {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth outside AuthProvider');
  return ctx;
}

export function isAdmin(user: User | null): boolean {
  return !!user && user.role >= ROLE.admin;
}

export function roleName(role: number): string {
  if (role >= ROLE.root) return 'root';
  if (role >= ROLE.admin) return 'admin';
  return 'user';
}

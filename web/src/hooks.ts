import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';
import { errorText } from './api';

export interface Async<T> {
  data: T | undefined;
  error: string | null;
  /** What the failed run threw (an ApiError carries the HTTP status), or null. */
  failure: unknown;
  loading: boolean;
  reload(): void;
}

/**
 * Runs a loader whenever deps change; stale answers from older runs are dropped. While a new run
 * loads, `data` is still the last answer (pages may keep showing it); a failed run clears it, so
 * a page never shows rows of an earlier query beside the error of the current one.
 */
export function useAsync<T>(load: () => Promise<T>, deps: DependencyList): Async<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  /** The deps the last run was started for. */
  const started = useRef<readonly unknown[] | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps decide when to reload
  useEffect(() => {
    // The same deps again, on the same component: React's development check (StrictMode mounts,
    // unmounts and mounts every effect once more), never a change. The run already started
    // answers it; before, every page asked the server twice in development, where its network
    // view is looked at (a reload bumps `tick`, and a new mount starts with no deps).
    const now = [...deps, tick];
    const last = started.current;
    if (last && last.length === now.length && last.every((d, i) => Object.is(d, now[i]))) return;
    started.current = now;
    const id = ++run.current;
    setLoading(true);
    setError(null);
    setFailure(null);
    load().then(
      (d) => {
        if (id !== run.current) return;
        setData(d);
        setLoading(false);
      },
      (e: unknown) => {
        if (id !== run.current) return;
        setData(undefined);
        setError(errorText(e));
        setFailure(() => e);
        setLoading(false);
      },
    );
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, failure, loading, reload };
}

export function useDocumentTitle(title: string) {
  useEffect(() => {
    document.title = title ? `${title} · modelgate` : 'modelgate';
  }, [title]);
}

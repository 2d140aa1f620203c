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

  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps decide when to reload
  useEffect(() => {
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

/** The `/api` success envelope of decisions.md. */
export function ok<T>(data: T, total?: number): { success: true; message: ''; data: T; total?: number } {
  return total === undefined
    ? { success: true, message: '', data }
    : { success: true, message: '', data, total };
}

export interface Paging {
  offset: number;
  limit: number;
}

/** `p` is 0-based; `page_size` 1..100 (validated by the route schema). */
export function paging(q: { p?: number; page_size?: number }): Paging {
  const limit = q.page_size ?? 20;
  return { offset: (q.p ?? 0) * limit, limit };
}

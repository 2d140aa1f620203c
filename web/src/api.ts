// Typed client for the gateway's /api envelope. Every call uses the session cookie.

export interface Envelope<T> {
  success: boolean;
  message: string;
  data: T;
  total?: number;
}

export class ApiError extends Error {
  readonly status: number;
  /** The form field the server named in its message, if any ("author_url: must be ..."). */
  readonly field: string | null;
  /** The envelope's `data` on a failure that carries one (a failed model refresh: its listing's outcome). */
  readonly data: unknown;
  constructor(status: number, message: string, field: string | null = null, data?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.field = field;
    this.data = data;
  }
}

export interface Paged<T> {
  items: T[];
  total: number;
}

type Query = Record<string, string | number | boolean | null | undefined>;

export function queryString(q: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === '') continue;
    params.set(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/**
 * Finds the field a validation message is about: "author_url: ...", "body/author_url must ...",
 * "settings.pricing[\"acme/m\"].prompt: ..." (settings_pricing).
 */
export function fieldOfMessage(message: string): string | null {
  const m = /^(?:body)?[/.]?([a-z_][a-z0-9_]*(?:[./][a-z0-9_]+)*)(?::|\[|\s+(?:must|is|should|has)\b)/i.exec(
    message.trim(),
  );
  return m ? m[1].toLowerCase().replace(/[./]/g, '_') : null;
}

/** The message without its leading field name, for display under that field. */
export function fieldMessage(message: string): string {
  const rest = message.replace(/^(?:body)?[/.]?[a-z_][a-z0-9_]*(?:[./][a-z0-9_]+)*:\s*/i, '');
  return rest ? rest[0].toUpperCase() + rest.slice(1) : message;
}

async function readError(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`.trim();
  let data: unknown;
  try {
    const body = (await res.json()) as { message?: string; error?: { message?: string }; data?: unknown };
    if (body && typeof body.message === 'string' && body.message) message = body.message;
    else if (body?.error?.message) message = body.error.message;
    data = body?.data;
  } catch {
    // Not JSON (a proxy error page, say): keep the status line.
  }
  if (res.status === 429) {
    const retry = res.headers.get('Retry-After');
    if (retry && !/retry in/i.test(message)) message = `${message} (retry in ${retry}s)`;
  }
  return new ApiError(res.status, message, fieldOfMessage(message), data);
}

/** Dispatched on window when a call answers 401: the auth provider forgets the user. */
export const SIGNED_OUT = 'modelgate:signed-out';

/** What a call that failed for want of a session says. */
export const SESSION_ENDED = 'Your session has ended. Sign in again, then try once more.';

async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  /** Answer an envelope with success false instead of throwing it (its data is the verdict). */
  keepFailure = false,
): Promise<Envelope<T>> {
  let res: Response;
  try {
    res = await fetch(`/api${path}`, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { Accept: 'application/json' }
          : { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'Network error: the gateway could not be reached.');
  }
  if (!res.ok) {
    // The session ended (expired, signed out in another tab, revoked): the console must stop
    // showing a signed-in user, whatever page made the call.
    if (res.status === 401 && !path.startsWith('/user/login')) {
      window.dispatchEvent(new Event(SIGNED_OUT));
      // Said in the console's words where the call failed (a form keeps what was typed): the
      // server's "sign in or send an access token" is meant for scripts.
      throw new ApiError(401, SESSION_ENDED);
    }
    throw await readError(res);
  }
  let env: Envelope<T>;
  try {
    env = (await res.json()) as Envelope<T>;
  } catch {
    throw new ApiError(res.status, 'The gateway sent an unreadable answer.');
  }
  if (!env.success && !keepFailure)
    throw new ApiError(res.status, env.message || 'Request failed', fieldOfMessage(env.message ?? ''));
  return env;
}

export const api = {
  async get<T>(path: string, q: Query = {}): Promise<T> {
    return (await request<T>('GET', path + queryString(q))).data;
  },
  async page<T>(path: string, q: Query = {}): Promise<Paged<T>> {
    const env = await request<T[]>('GET', path + queryString(q));
    const items = Array.isArray(env.data) ? env.data : [];
    return { items, total: typeof env.total === 'number' ? env.total : items.length };
  },
  /**
   * Every item of a paged list, a page of 100 at a time (the most the API gives at once), for a
   * control that must offer the whole list (a model chooser). Stops at `total` or an empty page.
   */
  async all<T>(path: string, q: Query = {}): Promise<T[]> {
    const items: T[] = [];
    for (let p = 0; ; p++) {
      const page = await api.page<T>(path, { ...q, p, page_size: 100 });
      items.push(...page.items);
      if (page.items.length === 0 || items.length >= page.total) return items;
    }
  },
  async post<T>(path: string, body: unknown = {}): Promise<T> {
    return (await request<T>('POST', path, body)).data;
  },
  /**
   * A POST whose answer is a verdict (a channel test): the whole envelope, `success` false
   * included, so its data (what failed and how) is not lost. A refused call (4xx, 5xx) still throws.
   */
  async verdict<T>(path: string, body: unknown = {}): Promise<Envelope<T>> {
    return request<T>('POST', path, body, true);
  },
  async put<T>(path: string, body: unknown): Promise<T> {
    return (await request<T>('PUT', path, body)).data;
  },
  async del<T>(path: string): Promise<T> {
    return (await request<T>('DELETE', path)).data;
  },
  /**
   * Deletes a row the page lists; false when it was already gone (a 404: deleted in another
   * tab or by another admin). Either way the row is no more, so the page says so and reads its
   * list again rather than showing a failure that leaves the row listed.
   */
  async delRow(path: string): Promise<boolean> {
    try {
      await request('DELETE', path);
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return false;
      throw e;
    }
  },
};

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

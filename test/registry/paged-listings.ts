/**
 * Fake model listings that page as the providers document them, for the discovery tests.
 *
 * Gemini `GET /v1beta/models` (models.list): `pageSize` defaults to 50 and is capped at 1000
 * ("this method returns at most 1000 models per page, even if you pass a larger pageSize");
 * `pageToken` is the `nextPageToken` of the page before, and "all other parameters provided to
 * ListModels must match the call that provided the page token"; the answer is
 * `{"models": [...], "nextPageToken": "..."}`, the token omitted on the last page. A bad token is a
 * 400 `INVALID_ARGUMENT` in Google's error shape.
 *
 * Anthropic `GET /v1/models`: `limit` 1..1000 (default 20), `after_id` the id after which the page
 * starts, newest models first; the answer is `{"data": [...], "has_more", "first_id", "last_id"}`.
 * A bad parameter is a 400 `invalid_request_error` in Anthropic's error shape.
 */
import type { FakeAnswer, ReceivedRequest } from '../helpers/fake-upstream.js';

const query = (req: ReceivedRequest) => new URL(req.path, 'http://x').searchParams;

/** Gemini's listing of `names` (without `models/`), each a chat model (`generateContent`). */
export function geminiPages(names: () => string[]): (req: ReceivedRequest) => FakeAnswer {
  return (req) => {
    const q = query(req);
    const size = Math.min(Number(q.get('pageSize') ?? 50) || 50, 1000);
    let offset = 0;
    const token = q.get('pageToken');
    if (token !== null && token !== '') {
      const t = decodeToken(token);
      if (!t || t.size !== size) return geminiError('Invalid page token.');
      offset = t.offset;
    }
    const all = names();
    const page = all.slice(offset, offset + size).map((n) => ({
      name: `models/${n}`,
      version: '001',
      displayName: `Model ${n}`,
      inputTokenLimit: 1048576,
      outputTokenLimit: 65536,
      supportedGenerationMethods: ['generateContent', 'countTokens'],
      temperature: 1,
      topP: 0.95,
      topK: 64,
    }));
    const next = offset + size < all.length ? encodeToken({ offset: offset + size, size }) : undefined;
    return { json: next ? { models: page, nextPageToken: next } : { models: page } };
  };
}

/** Anthropic's listing of `ids`, in the order given (the API lists the newest first). */
export function anthropicPages(ids: () => string[]): (req: ReceivedRequest) => FakeAnswer {
  return (req) => {
    const q = query(req);
    const limit = q.has('limit') ? Number(q.get('limit')) : 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      return anthropicError('limit: Input should be less than or equal to 1000');
    const all = ids();
    let start = 0;
    const after = q.get('after_id');
    if (after !== null) {
      const at = all.indexOf(after);
      if (at < 0) return anthropicError(`after_id: unknown model ${after}`);
      start = at + 1;
    }
    const data = all.slice(start, start + limit).map((id, i) => ({
      type: 'model',
      id,
      display_name: `Model ${id}`,
      created_at: new Date(Date.UTC(2025, 0, 1) - (start + i) * 1000).toISOString().replace('.000Z', 'Z'),
    }));
    return {
      json: {
        data,
        has_more: start + limit < all.length,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      },
    };
  };
}

/** `n` names `<prefix>-0000`, `<prefix>-0001`, ... */
export const names = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

function encodeToken(t: { offset: number; size: number }): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeToken(token: string): { offset: number; size: number } | undefined {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    return Number.isInteger(t?.offset) && Number.isInteger(t?.size) ? t : undefined;
  } catch {
    return undefined;
  }
}

function geminiError(message: string): FakeAnswer {
  return { status: 400, json: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } } };
}

function anthropicError(message: string): FakeAnswer {
  return {
    status: 400,
    json: { type: 'error', error: { type: 'invalid_request_error', message }, request_id: 'req_test' },
  };
}

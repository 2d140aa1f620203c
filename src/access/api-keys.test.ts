import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../gateway/errors.js';
import type { ApiKeyRow, ApiKeysRepo } from '../store/api-keys-repo.js';
import type { UsersRepo } from '../store/users-repo.js';
import { ApiKeyService } from './api-keys.js';
import { hashSecret } from './secrets.js';

const SECRET = 'sk-test-secret';

/** Repositories that answer after `delayMs`, count their lookups, and can lose the key. */
function repos(delayMs: number) {
  const state = { keyLookups: 0, userLookups: 0, gone: false, status: 1, down: false };
  const later = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), delayMs));
  const keys = {
    byHash(hash: string) {
      state.keyLookups++;
      if (state.down) return Promise.reject(new Error('database unavailable'));
      const row = { id: 1, user_id: 7, status: state.status, expires_time: null, allowed_models: null };
      return later(hash === hashSecret(SECRET) && !state.gone ? (row as unknown as ApiKeyRow) : undefined);
    },
  } as unknown as ApiKeysRepo;
  const users = {
    byId(id: number) {
      state.userLookups++;
      return later({ id, status: 1 });
    },
  } as unknown as UsersRepo;
  return { keys, users, state };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * Cache ages are read from `Date.now()`, which these tests move by hand (it stands still
 * otherwise), so no cache entry ages while a test waits, however late a timer fires on a loaded
 * machine. The lookups' own delays and `sleep` use real timers.
 */
const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

/** A key verified once and then left for 60% of its cache time (the second half starts refreshes). */
async function pastHalf(cacheMs: number) {
  const { keys, users, state } = repos(5);
  const svc = new ApiKeyService(keys, users, cacheMs);
  await svc.verify(SECRET);
  advance(cacheMs * 0.6);
  return { svc, state };
}

describe('API key verification cache', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  it('concurrent requests for a key not in the cache share one lookup', async () => {
    const { keys, users, state } = repos(20);
    const svc = new ApiKeyService(keys, users, 1_000);
    const all = await Promise.all(Array.from({ length: 50 }, () => svc.verify(SECRET)));
    expect(all.every((p) => p.key.id === 1)).toBe(true);
    expect([state.keyLookups, state.userLookups]).toEqual([1, 1]);
    expect(svc.verifyCached(SECRET)?.key.id).toBe(1);
  });

  it('a busy key is looked up again in the background before it expires, once', async () => {
    const { svc, state } = await pastHalf(1_000);
    for (let i = 0; i < 20; i++) expect(svc.verifyCached(SECRET)?.key.id).toBe(1);
    expect(state.keyLookups).toBe(2);
    // The background lookup (key, then user, 5 ms each) lands: the user timer is queued before
    // the 30 ms one, so it fires (and its continuation runs) first however late both are.
    await vi.waitFor(() => expect(state.userLookups).toBe(2));
    await sleep(30);
    // 1,050 ms: the first entry has expired; the refreshed one (until 1,600) still serves, and
    // is not yet past its own half.
    advance(450);
    expect(svc.verifyCached(SECRET)?.key.id).toBe(1);
    expect(state.keyLookups).toBe(2);
  });

  it('a background lookup that finds the key gone drops it: the next request is refused', async () => {
    const { svc, state } = await pastHalf(200);
    state.gone = true;
    expect(svc.verifyCached(SECRET)).toBeDefined(); // starts the lookup
    await sleep(30);
    expect(svc.verifyCached(SECRET)).toBeUndefined();
    const err = await svc.verify(SECRET).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(401);
  });

  it('a background lookup failing on the database keeps the entry and pauses further ones', async () => {
    const { svc, state } = await pastHalf(1_000);
    state.down = true;
    expect(svc.verifyCached(SECRET)?.key.id).toBe(1); // starts a lookup, which fails
    await sleep(10);
    for (let i = 0; i < 20; i++) expect(svc.verifyCached(SECRET)?.key.id).toBe(1);
    expect(state.keyLookups).toBe(2); // paused for a quarter of the cache time, not one per request
    advance(260);
    state.down = false;
    expect(svc.verifyCached(SECRET)?.key.id).toBe(1);
    expect(state.keyLookups).toBe(3);
  });

  it('a lookup in flight during a change does not cache what it read before the change', async () => {
    const { keys, users, state } = repos(20);
    const svc = new ApiKeyService(keys, users, 1_000);
    const first = svc.verify(SECRET);
    await sleep(5);
    state.status = 2; // disabled, and this instance is told (as after PUT /api/key)
    svc.invalidate();
    await first;
    expect(svc.verifyCached(SECRET)).toBeUndefined();
    const err = await svc.verify(SECRET).catch((e: unknown) => e);
    expect((err as GatewayError).status).toBe(401);
  });
});

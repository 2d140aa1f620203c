import { afterAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../../test/helpers/databases.js';
import {
  changedScope,
  changedTopic,
  dropCaches,
  LocalInvalidationBus,
  RedisInvalidationBus,
} from './pubsub.js';
import { closeRedis, openRedis, type RedisClient } from './redis.js';

describe('changedTopic', () => {
  it('maps successful management writes to topics', () => {
    expect(changedTopic('PUT', '/api/key', 200)).toBe('keys');
    expect(changedTopic('DELETE', '/api/user/:id', 200)).toBe('users');
    expect(changedTopic('POST', '/api/channel', 200)).toBe('registry');
    expect(changedTopic('PUT', '/api/model', 200)).toBe('registry');
    expect(changedTopic('DELETE', '/api/app/:id', 200)).toBe('apps');
  });
  it('self-service writes map to narrower topics that give no quota credit back', () => {
    expect(changedTopic('POST', '/api/user/logout', 200)).toBeUndefined();
    expect(changedTopic('POST', '/api/user/tokens', 200)).toBe('credentials');
    expect(changedTopic('DELETE', '/api/user/tokens/:id', 200)).toBe('credentials');
    expect(changedTopic('PUT', '/api/user/self', 200)).toBe('profile');
    expect(changedTopic('POST', '/api/key', 200)).toBe('key-added');
    // An admin's change of a user, and any change of an existing key, still drop everything.
    expect(changedTopic('PUT', '/api/user', 200)).toBe('users');
    expect(changedTopic('POST', '/api/user', 200)).toBe('users');
    expect(changedTopic('DELETE', '/api/key/:id', 200)).toBe('keys');
  });
  it('ignores reads, failures, logins, downloads and other routes', () => {
    expect(changedTopic('GET', '/api/key', 200)).toBeUndefined();
    expect(changedTopic('PUT', '/api/key', 400)).toBeUndefined();
    expect(changedTopic('POST', '/api/user/login', 200)).toBeUndefined();
    expect(changedTopic('POST', '/api/app/download/:id', 200)).toBeUndefined();
    expect(changedTopic('POST', '/v1/chat/completions', 200)).toBeUndefined();
    expect(changedTopic('POST', '/api/keys-other', 200)).toBeUndefined();
  });
});

describe('changedScope', () => {
  it('names the key or user a change of one was about, by body id or path', () => {
    expect(changedScope('keys', { method: 'PUT', body: { id: 7, name: 'x' } }, '/api/key')).toEqual({
      keyId: 7,
    });
    expect(changedScope('keys', { method: 'DELETE', params: { id: '7' } }, '/api/key/:id')).toEqual({
      keyId: 7,
    });
    expect(changedScope('users', { method: 'PUT', body: { id: 3 } }, '/api/user')).toEqual({ userId: 3 });
    expect(changedScope('users', { method: 'DELETE', params: { id: '3' } }, '/api/user/:id')).toEqual({
      userId: 3,
    });
    // None: everything goes.
    expect(changedScope('users', { method: 'POST', body: { username: 'x' } }, '/api/user')).toBeUndefined();
    expect(changedScope('keys', { method: 'PUT', body: { id: 'x' } }, '/api/key')).toBeUndefined();
    expect(changedScope('registry', { method: 'PUT', body: { id: 1 } }, '/api/channel')).toBeUndefined();
  });
});

describe('dropCaches', () => {
  it('drops key caches on user changes too', () => {
    const calls: string[] = [];
    const c = (n: string) => ({ invalidate: () => void calls.push(n) });
    const h = dropCaches({ apiKeys: c('keys'), users: c('users'), registry: c('registry') });
    h('users');
    h('registry');
    h('apps');
    expect(calls).toEqual(['users', 'keys', 'registry']);
  });

  it('gives quota credit back only for changes of keys and users by those who manage them', () => {
    const calls: string[] = [];
    const c = (n: string) => ({ invalidate: () => void calls.push(n) });
    const h = dropCaches({
      apiKeys: c('keys'),
      users: c('users'),
      registry: c('registry'),
      quota: { dropCredit: () => void calls.push('credit') },
    });
    h('credentials');
    expect(calls).toEqual(['users']);
    h('profile');
    expect(calls).toEqual(['users', 'users', 'keys']);
    h('key-added');
    expect(calls).toEqual(['users', 'users', 'keys', 'keys', 'users']);
    calls.length = 0;
    h('keys');
    h('users');
    expect(calls).toEqual(['keys', 'users', 'credit', 'users', 'keys', 'credit']);
  });

  it('passes the scope of a change to the ledger', () => {
    const scopes: unknown[] = [];
    const c = { invalidate: () => {} };
    const h = dropCaches({
      apiKeys: c,
      users: c,
      registry: c,
      quota: { dropCredit: (scope) => void scopes.push(scope) },
    });
    h('keys', { keyId: 4 });
    h('users', { userId: 2 });
    h('users');
    expect(scopes).toEqual([{ keyId: 4 }, { userId: 2 }, undefined]);
  });
});

describe('LocalInvalidationBus', () => {
  it('delivers to local handlers and survives a throwing one', async () => {
    const bus = new LocalInvalidationBus();
    const seen: string[] = [];
    bus.subscribe(() => {
      throw new Error('boom');
    });
    const off = bus.subscribe((t) => void seen.push(t));
    bus.publish('keys');
    off();
    bus.publish('apps');
    expect(seen).toEqual(['keys']);
    await bus.close();
  });
});

const until = async (cond: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return cond();
};

describe('RedisInvalidationBus', () => {
  const clients: RedisClient[] = [];
  afterAll(async () => {
    for (const c of clients) await closeRedis(c);
  });

  it('keeps working locally when Redis refuses connections', async () => {
    const c = await openRedis('redis://127.0.0.1:1/0', { readyTimeoutMs: 300 });
    clients.push(c);
    const bus = new RedisInvalidationBus(c, 'down:');
    await bus.start(300);
    const seen: string[] = [];
    bus.subscribe((t) => void seen.push(t));
    bus.publish('registry');
    expect(seen).toEqual(['registry']);
    await bus.close();
  });

  if (TEST_REDIS_URL) {
    it('reaches other instances, not the sender twice', async () => {
      const prefix = `pubsubtest:${process.pid}:${Date.now()}:`;
      const [ca, cb] = [await openRedis(TEST_REDIS_URL), await openRedis(TEST_REDIS_URL)];
      clients.push(ca, cb);
      const [a, b] = [new RedisInvalidationBus(ca, prefix), new RedisInvalidationBus(cb, prefix)];
      await Promise.all([a.start(), b.start()]);
      const seenA: string[] = [];
      const seenB: string[] = [];
      a.subscribe((t) => void seenA.push(t));
      b.subscribe((t) => void seenB.push(t));
      a.publish('keys');
      expect(await until(() => seenB.length > 0, 3000)).toBe(true);
      expect(seenB).toEqual(['keys']);
      expect(seenA).toEqual(['keys']);
      // A scope travels with its topic.
      const scopes: unknown[] = [];
      b.subscribe((_t, scope) => void scopes.push(scope));
      a.publish('keys', { keyId: 12 });
      expect(await until(() => scopes.length > 0, 3000)).toBe(true);
      expect(scopes).toEqual([{ keyId: 12 }]);
      await Promise.all([a.close(), b.close()]);
    });
  }
});

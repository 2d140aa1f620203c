/**
 * A user or an API key deleted by another request (another instance) while a request that uses
 * it is under way. A sign-in, or a create of a token or key for that user, read the user before
 * the delete and wrote its row after it: the foreign key refused the row and the client got a
 * 500. A delete of a key that another delete had just taken answered 200 again, with a second
 * "api key deleted" line in the audit log. The delete lands between the service's read and its
 * write (a hook on the repository the service writes through), so the interleaving is fixed, not
 * timed. SQLite here, PostgreSQL (and Redis) under `npm run test:pg`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let a: TestGateway;
let b: TestGateway;
let root: string;
const logged: Array<{ msg: string; key_id?: number; reqId?: string }> = [];

beforeAll(async () => {
  const log = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  a = await startTestGateway({ log: { level: 'info' } }, { log: log as FastifyBaseLogger });
  b = await startTestGateway({}, { databaseUrl: a.databaseUrl });
  root = await a.login();
}, 60_000);
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** A new user (role 1) named `username`, signing in with `password-1`; returns its id. */
async function newUser(username: string): Promise<number> {
  const r = await a.call('POST', '/api/user', { cookie: root, body: { username, password: 'password-1' } });
  expect(r.status).toBe(200);
  return r.body.data.id as number;
}

/** Deletes user `id` as another instance's `DELETE /api/user/:id` would, straight in the database. */
const deleteUser = (id: number) => a.services.database.db.deleteFrom('users').where('id', '=', id).execute();

describe('a user deleted while a request for them is under way', () => {
  it('a sign-in is a 401, as for a deleted user, not a 500', async () => {
    const id = await newUser('gone-signin');
    const creds = a.services.repos.credentials;
    const write = creds.createSession.bind(creds);
    vi.spyOn(creds, 'createSession').mockImplementation(async (...args) => {
      await deleteUser(id);
      return write(...args);
    });
    const r = await a.call('POST', '/api/user/login', {
      body: { username: 'gone-signin', password: 'password-1' },
    });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ success: false, message: 'invalid username or password' });
  });

  it("the user's own access token create is a 401, as the deleted user's session now is", async () => {
    const id = await newUser('gone-token');
    const cookie = await a.login('gone-token', 'password-1');
    const creds = a.services.repos.credentials;
    const write = creds.createToken.bind(creds);
    vi.spyOn(creds, 'createToken').mockImplementation(async (row) => {
      await deleteUser(id);
      return write(row);
    });
    const r = await a.call('POST', '/api/user/tokens', { cookie, body: { name: 'ci' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ success: false, message: 'sign in or send an access token' });
  });

  it("an admin's create of a key for them is a 404 naming the user", async () => {
    const id = await newUser('gone-key');
    const keys = a.services.repos.apiKeys;
    const write = keys.insert.bind(keys);
    vi.spyOn(keys, 'insert').mockImplementation(async (row) => {
      await deleteUser(id);
      return write(row);
    });
    const r = await a.call('POST', '/api/key', { cookie: root, body: { name: 'theirs', user_id: id } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ success: false, message: `user ${id} not found` });
  });

  it('their own key create is a 401', async () => {
    const id = await newUser('gone-own-key');
    const cookie = await a.login('gone-own-key', 'password-1');
    const keys = a.services.repos.apiKeys;
    const write = keys.insert.bind(keys);
    vi.spyOn(keys, 'insert').mockImplementation(async (row) => {
      await deleteUser(id);
      return write(row);
    });
    const r = await a.call('POST', '/api/key', { cookie, body: { name: 'mine' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ success: false, message: 'sign in or send an access token' });
  });
});

describe('deleting an API key another delete has just taken', () => {
  const newKey = async (name: string) => {
    const r = await a.call('POST', '/api/key', { cookie: root, body: { name } });
    expect(r.status).toBe(200);
    return r.body.data.id as number;
  };
  const deletedLines = (id: number) =>
    logged.filter((l) => l.msg === 'api key deleted' && l.key_id === id).length;

  it('is a 404, and writes no audit line', async () => {
    const id = await newKey('raced');
    const keys = a.services.repos.apiKeys;
    const remove = keys.delete.bind(keys);
    // The other delete lands after this one found the key, before it deletes it.
    vi.spyOn(keys, 'delete').mockImplementation(async (keyId) => {
      expect(await remove(keyId)).toBe(true);
      return remove(keyId);
    });
    const r = await a.call('DELETE', `/api/key/${id}`, { cookie: root });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ success: false, message: `API key ${id} not found` });
    expect(deletedLines(id)).toBe(0);
  });

  it('of ten parallel deletes on two instances, one is a 200 and the rest 404s', async () => {
    const id = await newKey('parallel');
    const onB = await b.login();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? b : a).call('DELETE', `/api/key/${id}`, { cookie: i % 2 ? onB : root }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(404)]);
    expect(deletedLines(id)).toBe(answers.filter((r, i) => r.status === 200 && i % 2 === 0).length);
  });
});

import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A new password or a disable ends the user's sessions in the same transaction as the user's
 * write: all or none. Before, the user was written first and the sessions deleted by a second
 * statement, so a failure between them (a crash, a lost connection; injected here by a trigger
 * that refuses the delete) left the new password in place and a stolen session still signed in.
 * SQLite here, PostgreSQL under `npm run test:pg`.
 */
let gw: TestGateway;
let root: string;

beforeAll(async () => {
  gw = await startTestGateway();
  root = await gw.login();
});
afterAll(() => gw?.close());
afterEach(() => refuseSessionDeletes(false));

const db = () => gw.services.database.db;

async function refuseSessionDeletes(on: boolean): Promise<void> {
  if (onPostgres) {
    await sql`drop trigger if exists refuse_delete on sessions`.execute(db());
    if (!on) return;
    await sql`create or replace function refuse_delete() returns trigger language plpgsql as $$
      begin raise exception 'injected failure'; end $$`.execute(db());
    await sql`create trigger refuse_delete before delete on sessions for each row execute function refuse_delete()`.execute(
      db(),
    );
    return;
  }
  await sql`drop trigger if exists refuse_delete`.execute(db());
  if (on)
    await sql`create trigger refuse_delete before delete on sessions
      begin select raise(abort, 'injected failure'); end`.execute(db());
}

let n = 0;
async function member() {
  const username = `s${++n}`;
  const u = await gw.call('POST', '/api/user', {
    cookie: root,
    body: { username, password: 'member-pass-1' },
  });
  expect(u.status).toBe(200);
  return { id: u.body.data.id as number, username, session: await gw.login(username, 'member-pass-1') };
}

describe("the end of a user's sessions and the write that ends them", () => {
  it('a new password is not set when the sessions cannot be ended', async () => {
    const m = await member();
    await refuseSessionDeletes(true);
    const pw = await gw.call('PUT', '/api/user', {
      cookie: root,
      body: { id: m.id, password: 'another-pass-2' },
    });
    expect(pw.status).toBe(500);
    await refuseSessionDeletes(false);
    // All or none: the old password still signs in, the new one does not.
    expect(await gw.login(m.username, 'member-pass-1')).toMatch(/mg_session=/);
    await expect(gw.login(m.username, 'another-pass-2')).rejects.toThrow(/401/);
  });

  it('a disable is not written when the sessions cannot be ended', async () => {
    const m = await member();
    await refuseSessionDeletes(true);
    const off = await gw.call('PUT', '/api/user', { cookie: root, body: { id: m.id, status: 2 } });
    expect(off.status).toBe(500);
    const row = await db()
      .selectFrom('users')
      .select('status')
      .where('id', '=', m.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe(1);
  });

  it('both still end the sessions when nothing fails', async () => {
    const m = await member();
    const other = await gw.login(m.username, 'member-pass-1');
    const pw = await gw.call('PUT', '/api/user/self', {
      cookie: m.session,
      body: { password: 'another-pass-2', current_password: 'member-pass-1' },
    });
    expect(pw.status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: other })).status).toBe(401);
    expect((await gw.call('GET', '/api/user/self', { cookie: m.session })).status).toBe(200);
    expect((await gw.call('PUT', '/api/user', { cookie: root, body: { id: m.id, status: 2 } })).status).toBe(
      200,
    );
    expect(await db().selectFrom('sessions').select('id').where('user_id', '=', m.id).execute()).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeferredSettleLedger } from '../../src/access/quota/deferred-ledger.js';
import { MemorySpendCounter } from '../../src/access/quota/memory-spend-counter.js';
import type { QuotaLedger } from '../../src/access/quota/quota-ledger.js';
import { SpendLedger } from '../../src/access/quota/spend-ledger.js';
import { GatewayError } from '../../src/gateway/errors.js';
import { createUsageStore } from '../../src/store/usage-store.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let gw2: TestGateway;
let root: string;

beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
  // A second instance on the same database: the ledger must hold across instances.
  gw2 = await startTestGateway({}, { databaseUrl: gw.databaseUrl, redis: false });
  root = await gw.login();
});
afterAll(async () => {
  await gw2?.stop();
  await gw?.close();
});

let seq = 0;
/** A user and one key, limits in USD (null = unlimited). */
async function account(userLimit: number | null, keyLimit: number | null) {
  const u = await gw.call('POST', '/api/user', {
    cookie: root,
    body: { username: `q${++seq}`, password: 'password-123', quota_limit: userLimit },
  });
  expect(u.status).toBe(200);
  const k = await gw.call('POST', '/api/key', {
    cookie: root,
    body: { name: 'k', user_id: u.body.data.id, quota_limit: keyLimit },
  });
  expect(k.status).toBe(200);
  return { userId: u.body.data.id as number, keyId: k.body.data.id as number };
}

/**
 * Settlements are written with the request logs in batches: write them (and give back leased
 * credit, which `flush()` does) before reading spend.
 */
const flushed = () => Promise.all([gw.services.requestLogs.flush(), gw2.services.requestLogs.flush()]);
const keyUsed = async (id: number) => (await gw.services.repos.apiKeys.byId(id))!.quota_used_micros;
const userUsed = async (id: number) => (await gw.services.repos.users.byId(id))!.quota_used_micros;

/**
 * The request-log writer's queue, with its writes run by the test instead of on a timer:
 * `write(all)` runs what a write runs first (the ledger gives credit back); no write is woken.
 */
function writesByHand() {
  const logs = gw.services.requestLogs;
  let hook = (_all: boolean) => {};
  const queue = {
    settle: logs.settle.bind(logs),
    owes: logs.owes.bind(logs),
    flush: logs.flush.bind(logs),
    beforeWrite: (fn: (all: boolean) => void) => {
      hook = fn;
    },
    wake: () => {},
  };
  return { queue, write: (all: boolean) => hook(all) };
}

/** `n` requests of 1,000 micros each, one after another, each settled at its estimate; then no lease on its way. */
async function burst(ledger: DeferredSettleLedger, keyId: number, userId: number, n: number) {
  for (let i = 0; i < n; i++) ledger.settle(await ledger.reserve({ keyId, userId, micros: 1_000 }), 1_000);
  await ledger.idle();
}

async function expect402(p: unknown, scope: 'key' | 'user') {
  const err = await Promise.resolve(p).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).status).toBe(402);
  expect((err as GatewayError).message).toMatch(/^quota exhausted: /);
  expect((err as GatewayError).metadata?.scope).toBe(scope);
}

describe('quota ledger on the database', () => {
  it('200 concurrent reserve/settle cycles on two instances never overspend and add up exactly', async () => {
    // 100_000 micros: less than the ~180_000 the 200 calls cost, so some are refused however the
    // calls interleave. (With 200_000 only leased credit held ahead refused any, and an overrun
    // now gives that credit back.)
    const { userId, keyId } = await account(null, 0.1);
    const limit = 100_000;
    const ledgers: QuotaLedger[] = [gw.services.quota, gw2.services.quota];
    let maxSeen = 0;
    let settledSum = 0;
    let running = true;
    const observe = async () => {
      maxSeen = Math.max(maxSeen, await keyUsed(keyId));
    };
    const sampler = (async () => {
      // Yield to the event loop each round: on SQLite every query resolves in microtasks only.
      while (running) {
        await observe();
        await new Promise((res) => setImmediate(res));
      }
    })();
    const maxReserve = 3_000;
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const ledger = ledgers[i % 2]!;
        const reserve = 1_000 + ((i * 37) % 2_001); // 1000..3000
        let r: Awaited<ReturnType<QuotaLedger['reserve']>>;
        try {
          r = await ledger.reserve({ keyId, userId, micros: reserve });
        } catch (err) {
          return err;
        }
        try {
          await observe();
          await new Promise((res) => setImmediate(res));
        } finally {
          // Mostly at or under the estimate; a few slightly over (never lose spend).
          const actual = i % 25 === 0 ? reserve + 7 : (reserve * ((i * 13) % 10)) / 10;
          settledSum += Math.round(actual);
          await ledger.settle(r, actual);
        }
        await observe();
        return 'ok';
      }),
    );
    running = false;
    await sampler;
    const rejected = outcomes.filter((o) => o !== 'ok');
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.length).toBeLessThan(200);
    for (const e of rejected) {
      expect(e).toBeInstanceOf(GatewayError);
      expect((e as GatewayError).status).toBe(402);
    }
    expect(maxSeen).toBeLessThanOrEqual(limit + maxReserve);
    await flushed();
    expect(await keyUsed(keyId)).toBe(settledSum);
    expect(await userUsed(userId)).toBe(settledSum);
  });

  it('refuses on the user limit and undoes the key hold', async () => {
    const { userId, keyId } = await account(0.001, null); // user: 1000 micros
    const r = await gw.services.quota.reserve({ keyId, userId, micros: 800 });
    await expect402(gw.services.quota.reserve({ keyId, userId, micros: 300 }), 'user');
    expect(await keyUsed(keyId)).toBe(800);
    expect(await userUsed(userId)).toBe(800);
    await gw.services.quota.release(r);
    await flushed();
    expect(await keyUsed(keyId)).toBe(0);
    expect(await userUsed(userId)).toBe(0);
  });

  it('settles past the limit by the difference, then the key shows status 4 and refuses even tiny calls', async () => {
    const { userId, keyId } = await account(null, 0.001);
    const r = await gw.services.quota.reserve({ keyId, userId, micros: 900 });
    await gw.services.quota.settle(r, 1_250);
    await gw.services.quota.settle(r, 5_000); // a second settle is ignored
    await flushed();
    expect(await keyUsed(keyId)).toBe(1_250);
    const k = await gw.call('GET', `/api/key/${keyId}`, { cookie: root });
    expect(k.body.data.status).toBe(4);
    expect(k.body.data.quota_used).toBe(0.00125);
    await expect402(gw.services.quota.reserve({ keyId, userId, micros: 0 }), 'key');
  });

  it('an absurd cost (an upstream claiming 1e20 tokens) is settled clamped and blocks no later write', async () => {
    const { userId, keyId } = await account(null, null);
    const r = await gw.services.quota.reserve({ keyId, userId, micros: 10 });
    await gw.services.quota.settle(r, 1e22);
    await flushed();
    expect(await keyUsed(keyId)).toBe(Number.MAX_SAFE_INTEGER);
    // Spend saturates at 2^53 - 1: a thousand such settlements would overflow bigint otherwise.
    const r1 = await gw.services.quota.reserve({ keyId, userId, micros: 10 });
    await gw.services.quota.settle(r1, 1e22);
    await flushed();
    expect(await keyUsed(keyId)).toBe(Number.MAX_SAFE_INTEGER);
    expect(await userUsed(userId)).toBe(Number.MAX_SAFE_INTEGER);
    // Later settlements are written.
    const other = await account(null, null);
    const r2 = await gw.services.quota.reserve({ ...other, micros: 0 });
    await gw.services.quota.settle(r2, 7);
    await flushed();
    expect(await keyUsed(other.keyId)).toBe(7);
  });

  it('a zero-estimate reservation on an exactly exhausted key is refused', async () => {
    const { userId, keyId } = await account(null, 0.001);
    const r = await gw.services.quota.reserve({ keyId, userId, micros: 1_000 });
    await gw.services.quota.settle(r, 1_000);
    await expect402(gw.services.quota.reserve({ keyId, userId, micros: 0 }), 'key');
  });

  it('an overrun that takes the key past its limit: the credit this instance holds is given back and the next reservation refused', async () => {
    const { userId, keyId } = await account(null, 0.005);
    const { queue } = writesByHand();
    const ledger = new DeferredSettleLedger(createUsageStore(gw.services.database), queue);
    ledger.settle(await ledger.reserve({ keyId, userId, micros: 100 }), 100); // an exact lease
    ledger.settle(await ledger.reserve({ keyId, userId, micros: 100 }), 100); // a lease of 200: 100 credit
    const r = await ledger.reserve({ keyId, userId, micros: 50 }); // from the credit: 50 left
    expect(ledger.credit).toBe(50);
    ledger.settle(r, 9_000); // 8,950 over its estimate: the key is past its 5,000
    expect(ledger.credit).toBe(0);
    await expect402(ledger.reserve({ keyId, userId, micros: 50 }), 'key');
    await gw.services.requestLogs.flush();
    // 100 + 100 + 9,000 spent; nothing held.
    expect(await keyUsed(keyId)).toBe(9_200);
    const k = await gw.call('GET', `/api/key/${keyId}`, { cookie: root });
    expect(k.body.data.status).toBe(4);
  });

  it('an overrun past the user limit: the credit of every key of that user is given back', async () => {
    const { userId, keyId } = await account(0.005, null);
    const other = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'k2', user_id: userId } });
    const keyId2 = other.body.data.id as number;
    const { queue } = writesByHand();
    const ledger = new DeferredSettleLedger(createUsageStore(gw.services.database), queue);
    for (const id of [keyId, keyId2]) {
      ledger.settle(await ledger.reserve({ keyId: id, userId, micros: 100 }), 100);
      ledger.settle(await ledger.reserve({ keyId: id, userId, micros: 100 }), 100); // 100 credit each
    }
    ledger.settle(await ledger.reserve({ keyId, userId, micros: 50 }), 9_000);
    expect(ledger.credit).toBe(0);
    await expect402(ledger.reserve({ keyId: keyId2, userId, micros: 50 }), 'user');
    await gw.services.requestLogs.flush();
    expect(await userUsed(userId)).toBe(9_400);
  });

  it("an overrun of a key whose user has no limit gives back that key's credit only: the user's other keys keep theirs", async () => {
    const { userId, keyId } = await account(null, 0.005);
    const other = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'k2', user_id: userId } });
    const keyId2 = other.body.data.id as number;
    const { queue } = writesByHand();
    const ledger = new DeferredSettleLedger(createUsageStore(gw.services.database), queue);
    const reserve = (id: number, micros: number) =>
      ledger.reserve({ keyId: id, userId, micros, userLimited: false });
    for (const id of [keyId, keyId2]) {
      ledger.settle(await reserve(id, 100), 100);
      ledger.settle(await reserve(id, 100), 100); // 100 credit each
    }
    ledger.settle(await reserve(keyId, 50), 9_000); // the key is past its 5,000
    // The other key's 100 stays, and serves without the database.
    expect(ledger.credit).toBe(100);
    ledger.settle(await reserve(keyId2, 100), 100);
    expect(ledger.credit).toBe(0);
    await expect402(reserve(keyId, 50), 'key');
    await gw.services.requestLogs.flush();
    expect(await keyUsed(keyId)).toBe(9_200);
    expect(await userUsed(userId)).toBe(9_500);
  });

  it('a refund becomes credit the next reservation takes without the database', async () => {
    const { userId, keyId } = await account(null, 0.001);
    const r = await gw.services.quota.reserve({ keyId, userId, micros: 1_000 });
    await gw.services.quota.settle(r, 100); // 900 back: still counted on the row, as credit
    expect(gw.services.requestLogs.owes('key', keyId)).toBe(false);
    expect(await keyUsed(keyId)).toBe(1_000);
    const again = await gw.services.quota.reserve({ keyId, userId, micros: 900 });
    expect(await keyUsed(keyId)).toBe(1_000);
    await expect402(gw.services.quota.reserve({ keyId, userId, micros: 1 }), 'key');
    await gw.services.quota.release(again);
    await flushed();
    expect(await keyUsed(keyId)).toBe(100);
    expect(await userUsed(userId)).toBe(100);
  });

  it('a refusal gives back the credit this instance holds on the row, writes it, and asks again', async () => {
    const { userId, keyId } = await account(null, 0.001);
    const r = await gw.services.quota.reserve({ keyId, userId, micros: 600 });
    await gw.services.quota.settle(r, 100); // 500 credit, the row reads 600
    const big = await gw.services.quota.reserve({ keyId, userId, micros: 700 });
    // 100 spent + 700 held: the credit was written back before the exact question.
    expect(await keyUsed(keyId)).toBe(800);
    await gw.services.quota.settle(big, 700);
    await flushed();
    expect(await keyUsed(keyId)).toBe(800);
    expect(await userUsed(userId)).toBe(800);
  });

  it("a refusal gives back the refusing row's credit only: another busy key keeps its own", async () => {
    const busy = await account(null, 1);
    const tight = await account(null, 0.001);
    const ledger = new DeferredSettleLedger(createUsageStore(gw.services.database), gw.services.requestLogs);
    for (let i = 0; i < 20; i++) ledger.settle(await ledger.reserve({ ...busy, micros: 1_000 }), 1_000);
    await ledger.idle(); // a lease asked ahead has landed
    const busyCredit = ledger.credit;
    expect(busyCredit).toBeGreaterThan(0);
    const r = await ledger.reserve({ ...tight, micros: 600 });
    ledger.settle(r, 100); // 500 credit on the tight key, its row reads 600
    // Needs the tight key's own credit back: refused, given back, written, asked again.
    const big = await ledger.reserve({ ...tight, micros: 700 });
    expect(await keyUsed(tight.keyId)).toBe(800);
    expect(ledger.credit).toBe(busyCredit);
    ledger.settle(big, 700);
    await ledger.idle();
    await flushed();
    expect(ledger.credit).toBe(0);
    expect(await keyUsed(busy.keyId)).toBe(20_000);
  });

  it('a busy key leases ahead: few database reservations, the row never past its limit, exact once quiet', async () => {
    const { userId, keyId } = await account(null, 1); // 1_000_000 micros
    let asked = 0;
    const store = createUsageStore(gw.services.database);
    const counting = {
      reserve: (k: number | null, u: number, m: number) => {
        asked++;
        return store.reserve(k, u, m);
      },
    };
    // No hold for a quiet key's credit here (that is tested on its own below).
    const ledger = new DeferredSettleLedger(counting, gw.services.requestLogs, { creditHoldMs: 0 });
    let spent = 0;
    let maxSeen = 0;
    for (let i = 0; i < 100; i++) {
      const r = await ledger.reserve({ keyId, userId, micros: 5_000 });
      maxSeen = Math.max(maxSeen, await keyUsed(keyId));
      const actual = 1_000 + i;
      spent += actual;
      await ledger.settle(r, actual);
    }
    expect(asked).toBeLessThan(10);
    expect(maxSeen).toBeLessThanOrEqual(1_000_000);
    const credit = ledger.credit;
    expect(credit).toBeGreaterThan(0);
    // A write on the timer after a busy interval keeps the credit (the key's next request must
    // not wait for a lease); the row holds exactly what was spent and the credit.
    await gw.services.requestLogs.flush(false);
    expect(ledger.credit).toBe(credit);
    expect(await keyUsed(keyId)).toBe(spent + credit);
    // No reservation since: the next such write gives it back.
    await gw.services.requestLogs.flush(false);
    expect(ledger.credit).toBe(0);
    expect(await keyUsed(keyId)).toBe(spent);
    expect(await userUsed(userId)).toBe(spent);
  });

  it('concurrent requests of one key wait for the lease being asked instead of each asking', async () => {
    const { userId, keyId } = await account(null, 1);
    let asked = 0;
    const store = createUsageStore(gw.services.database);
    // A round trip of a few ms, as on PostgreSQL, during which the other requests arrive.
    const slow = {
      reserve: async (k: number | null, u: number, m: number) => {
        asked++;
        await new Promise((r) => setTimeout(r, 3));
        return store.reserve(k, u, m);
      },
    };
    const ledger = new DeferredSettleLedger(slow, gw.services.requestLogs);
    const held = await Promise.all(
      Array.from({ length: 50 }, () => ledger.reserve({ keyId, userId, micros: 1_000 })),
    );
    // Leases of 1, 2, 4, ... reservations: 6 asks cover 50 (each request asking: 50).
    expect(asked).toBeLessThanOrEqual(7);
    expect(await keyUsed(keyId)).toBeLessThanOrEqual(1_000_000);
    await Promise.all(held.map((r) => ledger.settle(r, 1_000)));
    await ledger.idle(); // a lease asked ahead in the background
    await flushed();
    expect(ledger.credit).toBe(0);
    expect(await keyUsed(keyId)).toBe(50_000);
    expect(await userUsed(userId)).toBe(50_000);
  });
  it('a busy key asks for its next lease before the credit runs out: requests do not wait for it', async () => {
    const { userId, keyId } = await account(null, 10);
    const store = createUsageStore(gw.services.database);
    // Time here is counted in requests, not milliseconds, so the figures below are exact on any
    // machine: the database answers a lease (on the real database) two requests after it was
    // asked, or at once when a request waits for it. (Timed with sleeps, a loaded CI machine
    // made requests wait that the mechanism had not made wait.)
    const ROUND_TRIP = 2;
    const inFlight: { left: number; answer: () => void; answered: Promise<unknown> }[] = [];
    let asked = 0;
    const slow = {
      reserve: (k: number | null, u: number, m: number) => {
        asked++;
        const result = store.reserve(k, u, m);
        let answer!: () => void;
        const gate = new Promise<void>((open) => {
          answer = open;
        });
        const answered = gate.then(() => result);
        inFlight.push({ left: ROUND_TRIP, answer, answered });
        return answered;
      },
    };
    // The request-log writes run here every 40 requests, at known points (the real writer's run
    // on a timer). A busy key keeps its credit across them: given back at each, the next request
    // waited for a lease every time (here 12 more waits).
    const { queue, write } = writesByHand();
    const ledger = new DeferredSettleLedger(slow, queue, { creditHoldMs: 0 });
    const answer = async (due: typeof inFlight) => {
      for (const a of due) {
        inFlight.splice(inFlight.indexOf(a), 1);
        a.answer();
      }
      await Promise.all(due.map((a) => a.answered));
      await new Promise((r) => setImmediate(r)); // the ledger's own continuations run
    };
    let waited = 0;
    for (let i = 0; i < 500; i++) {
      // A reservation that waits for the database is a promise; one from credit is not.
      const pending = ledger.reserve({ keyId, userId, micros: 1_000 });
      if (pending instanceof Promise) {
        waited++;
        // Answered at once, including any ask the ledger makes while this one is answered.
        let settled = false;
        pending.then(
          () => (settled = true),
          () => (settled = true),
        );
        while (!settled) await answer([...inFlight]);
      }
      ledger.settle(await pending, 1_000);
      // One request's time passes.
      for (const a of inFlight) a.left--;
      await answer(inFlight.filter((a) => a.left <= 0));
      if (i % 40 === 39) write(false);
    }
    // Leases of 1, 2 and 4 are waited for; from 8 on the next one is asked ahead (with a quarter
    // of the lease left). Without that, each lease (13 in all) would be waited for.
    expect(waited).toBe(3);
    expect(ledger.stats).toEqual({ leasesWaited: 3, leasesAhead: 11, waits: 3 });
    // 1 + 2 + 4 + 8 + 16 + 32 cover 63 requests, then leases of 64 (one asked ahead at the end).
    expect(asked).toBe(14);
    await answer([...inFlight]);
    await ledger.idle();
    // The key has gone quiet: the write after one that saw it busy gives the credit back.
    const credit = ledger.credit;
    expect(credit).toBeGreaterThan(0);
    write(false);
    expect(ledger.credit).toBe(credit);
    write(false);
    expect(ledger.credit).toBe(0);
    await flushed();
    expect(await keyUsed(keyId)).toBe(500_000);
  });
  it('a key that went quiet gives its credit back but keeps its lease size for a while', async () => {
    const run = async (leaseMemoryMs: number | undefined, pauseMs = 0) => {
      const { userId, keyId } = await account(null, 10);
      const store = createUsageStore(gw.services.database);
      const asks: number[] = [];
      const counting = {
        reserve: (k: number | null, u: number, m: number) => {
          asks.push(m);
          return store.reserve(k, u, m);
        },
      };
      const { queue, write } = writesByHand();
      const ledger = new DeferredSettleLedger(counting, queue, { leaseMemoryMs, creditHoldMs: 0 });
      await burst(ledger, keyId, userId, 200);
      expect(Math.max(...asks)).toBe(64_000);
      write(false); // saw it busy: kept
      expect(ledger.credit).toBeGreaterThan(0);
      write(false); // quiet since: given back
      expect(ledger.credit).toBe(0);
      // No write comes while it is quiet (an instance with no other traffic).
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      asks.length = 0;
      await burst(ledger, keyId, userId, 200);
      write(true); // as a flush or shutdown would: everything back
      expect(ledger.credit).toBe(0);
      await flushed();
      expect(await keyUsed(keyId)).toBe(400_000);
      return asks;
    };
    // The next burst's first lease is the size the key had reached: one commit waited for.
    expect((await run(undefined))[0]).toBe(64_000);
    // Forgotten (quiet longer than the memory): exact again, then 2, 4, ...
    expect((await run(0)).slice(0, 3)).toEqual([1_000, 2_000, 4_000]);
    // Also when no write came after the memory ran out: the lease asked for notices.
    expect((await run(50, 120)).slice(0, 3)).toEqual([1_000, 2_000, 4_000]);
  });

  it('a key quiet for less than the hold keeps its credit: its next burst waits for no lease', async () => {
    const run = async (creditHoldMs: number, pauseMs: number) => {
      const { userId, keyId } = await account(null, 10);
      const { queue, write } = writesByHand();
      const ledger = new DeferredSettleLedger(createUsageStore(gw.services.database), queue, {
        creditHoldMs,
      });
      await burst(ledger, keyId, userId, 100);
      const waitedFirst = ledger.stats.leasesWaited;
      write(false); // saw it busy: kept
      await new Promise((r) => setTimeout(r, pauseMs));
      write(false); // quiet since: kept only within the hold
      write(false);
      const held = ledger.credit;
      await burst(ledger, keyId, userId, 100);
      const waitedAgain = ledger.stats.leasesWaited - waitedFirst;
      write(true);
      await flushed();
      expect(await keyUsed(keyId)).toBe(200_000);
      return { held, waitedAgain };
    };
    // Within the hold: the credit stays through the quiet writes, and the next burst starts on it.
    const kept = await run(60_000, 0);
    expect(kept.held).toBeGreaterThan(0);
    expect(kept.waitedAgain).toBe(0);
    // Quiet past the hold: the first write after it gives the credit back; the next burst asks.
    const back = await run(50, 120);
    expect(back.held).toBe(0);
    expect(back.waitedAgain).toBe(1);
  });

  it('a held credit goes back on its own once the hold runs out, with no request and nothing else queued', async () => {
    const { userId, keyId } = await account(null, 10);
    // The real writer (writes every 500 ms here): the hold outlasts two of its writes, so the
    // credit goes back only if each write that keeps it wakes the next.
    const ledger = new DeferredSettleLedger(createUsageStore(gw.services.database), gw.services.requestLogs, {
      creditHoldMs: 1_200,
    });
    await burst(ledger, keyId, userId, 100);
    expect(ledger.credit).toBeGreaterThan(0);
    const started = Date.now();
    await vi.waitFor(() => expect(ledger.credit).toBe(0), { timeout: 8_000, interval: 50 });
    // Kept through the hold (not at the first quiet write), given back after it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    await flushed();
    expect(await keyUsed(keyId)).toBe(100_000);
  });

  it('a lease that comes back after the write that returns credit is given back by a write of its own', async () => {
    const { userId, keyId } = await account(null, 10);
    const store = createUsageStore(gw.services.database);
    // The database applies each lease at once; each answer waits for its gate, which the test
    // opens at once, except for the first lease asked ahead (by a reservation served from credit).
    const calls: Array<() => void> = [];
    const late = {
      reserve: async (k: number | null, u: number, m: number) => {
        let open = () => {};
        const gate = new Promise<void>((r) => {
          open = r;
        });
        calls.push(open);
        const result = await store.reserve(k, u, m);
        await gate;
        return result;
      },
    };
    const ledger = new DeferredSettleLedger(late, gw.services.requestLogs);
    let served = 0;
    let held: (() => void) | undefined;
    while (!held && served < 100) {
      const before = calls.length;
      const pending = ledger.reserve({ keyId, userId, micros: 1_000 });
      const made = calls.slice(before);
      if (pending instanceof Promise || made.length === 0) for (const open of made) open();
      else held = made[0];
      ledger.settle(await pending, 1_000);
      served++;
    }
    expect(held).toBeDefined();
    // The write that gives credit back runs while that lease is on its way; then the key goes
    // quiet, past the flush interval (500 ms), so no write is left on a timer from before.
    await flushed();
    expect(ledger.credit).toBe(0);
    await new Promise((r) => setTimeout(r, 700));
    held!();
    await ledger.idle();
    expect(ledger.credit).toBeGreaterThan(0);
    // No request comes; the credit is still given back within the flush interval.
    for (let waited = 0; ledger.credit > 0 && waited < 5_000; waited += 50)
      await new Promise((r) => setTimeout(r, 50));
    expect(ledger.credit).toBe(0);
    await flushed();
    // What quota_used holds is what was spent: every lease given back.
    expect(await keyUsed(keyId)).toBe(served * 1_000);
    expect(await userUsed(userId)).toBe(served * 1_000);
  });
  it('a database that fails a lease fails the request that asked, and the waiting ones ask again', async () => {
    const { userId, keyId } = await account(null, 1);
    const store = createUsageStore(gw.services.database);
    let calls = 0;
    const flaky = {
      reserve: async (k: number | null, u: number, m: number) => {
        await new Promise((r) => setTimeout(r, 2));
        if (++calls === 1) throw new Error('connection reset');
        return store.reserve(k, u, m);
      },
    };
    const ledger = new DeferredSettleLedger(flaky, gw.services.requestLogs);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => ledger.reserve({ keyId, userId, micros: 1_000 })),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    const held = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    await Promise.all(held.map((r) => ledger.settle(r, 1_000)));
    await flushed();
    expect(await keyUsed(keyId)).toBe(4_000);
  });
  it('a lowered limit applies at once: changing a key gives the leased credit back', async () => {
    const { userId, keyId } = await account(null, 1);
    for (let i = 0; i < 6; i++) {
      const r = await gw.services.quota.reserve({ keyId, userId, micros: 10_000 });
      await gw.services.quota.settle(r, 10_000);
    }
    // Busy: the last leases asked ahead, so credit is held and counted on the row.
    expect(await keyUsed(keyId)).toBeGreaterThan(60_000);
    const put = await gw.call('PUT', '/api/key', { cookie: root, body: { id: keyId, quota_limit: 0.065 } });
    expect(put.status).toBe(200);
    // 60_000 spent; a 10_000 estimate no longer fits the new limit of 65_000.
    await expect402(gw.services.quota.reserve({ keyId, userId, micros: 10_000 }), 'key');
    await flushed();
    expect(await keyUsed(keyId)).toBe(60_000);
  });

  it('refunds of requests held before a lowered limit go back to the database, not into credit past it', async () => {
    const { userId, keyId } = await account(null, 1);
    const quota = gw.services.quota;
    // 20 requests in flight, each held at an estimate of 50,000 and costing 1,000.
    const held = [];
    for (let i = 0; i < 20; i++) held.push(await quota.reserve({ keyId, userId, micros: 50_000 }));
    const put = await gw.call('PUT', '/api/key', { cookie: root, body: { id: keyId, quota_limit: 0 } });
    expect(put.status).toBe(200);
    for (const r of held) await quota.settle(r, 1_000);
    // The refunds (980,000) are not credit: the next request asks the database, which refuses.
    await expect402(quota.reserve({ keyId, userId, micros: 1_000 }), 'key');
    await flushed();
    expect(await keyUsed(keyId)).toBe(20_000);
  });

  it('a lease asked before a lowered limit and granted after it is given back, not kept as credit', async () => {
    // A store whose answers the test releases, and a queue that records what is given back.
    const answers: Array<() => void> = [];
    const store = {
      reserve: () => new Promise<null>((resolve) => answers.push(() => resolve(null))),
    };
    const settled: number[] = [];
    const queue = {
      settle: (_k: number | null, _u: number, delta: number) => void settled.push(delta),
      owes: () => false,
      flush: async () => {},
      beforeWrite: () => {},
      wake: () => {},
    };
    const ledger = new DeferredSettleLedger(store, queue);
    const key = { keyId: 1, userId: 1, micros: 1_000 };
    const answered = async () => {
      const p = ledger.reserve(key);
      answers.shift()!();
      return p;
    };
    // Leases double: the first is exact, the second two reservations' worth (one left as credit,
    // taken by the third without the store), the fourth asks for four.
    ledger.settle(await answered(), 1_000);
    ledger.settle(await answered(), 1_000);
    ledger.settle(await ledger.reserve(key), 1_000);
    expect(ledger.credit).toBe(0);
    const asking = ledger.reserve(key);
    ledger.dropCredit();
    answers.shift()!();
    const r = await asking;
    // The 3,000 of surplus went back at once; none is credit a next request could take.
    expect(settled).toEqual([-3_000]);
    expect(ledger.credit).toBe(0);
    ledger.settle(r, 400);
    expect(settled).toEqual([-3_000, -600]);
    expect(ledger.credit).toBe(0);
  });

  it("a change of one key gives back that key's credit only; another busy key keeps its own", async () => {
    const a = await account(null, 1);
    const b = await account(null, 1);
    const quota = gw.services.quota as DeferredSettleLedger;
    for (const { keyId, userId } of [a, b])
      for (let i = 0; i < 6; i++) quota.settle(await quota.reserve({ keyId, userId, micros: 1_000 }), 1_000);
    await quota.idle();
    const creditOf = async (keyId: number) => (await keyUsed(keyId)) - 6_000;
    expect(await creditOf(a.keyId)).toBeGreaterThan(0);
    const heldB = await creditOf(b.keyId);
    expect(heldB).toBeGreaterThan(0);
    // The owner renames key A: only A's credit goes back.
    const put = await gw.call('PUT', '/api/key', { cookie: root, body: { id: a.keyId, name: 'renamed' } });
    expect(put.status).toBe(200);
    await gw.services.requestLogs.flush(false);
    expect(await creditOf(a.keyId)).toBe(0);
    expect(await creditOf(b.keyId)).toBe(heldB);
    // B's next request takes from its credit: no lease waited for.
    const waited = quota.stats.leasesWaited;
    quota.settle(await quota.reserve({ keyId: b.keyId, userId: b.userId, micros: 1_000 }), 1_000);
    expect(quota.stats.leasesWaited).toBe(waited);
  });

  it('spend survives a restart of every instance', async () => {
    const { userId, keyId } = await account(null, null);
    const r = await gw2.services.quota.reserve({ keyId, userId, micros: 500 });
    await gw2.services.quota.settle(r, 432);
    await flushed();
    const gw3 = await startTestGateway({}, { databaseUrl: gw.databaseUrl, redis: false });
    try {
      expect((await gw3.services.repos.apiKeys.byId(keyId))!.quota_used_micros).toBe(432);
      expect((await gw3.services.repos.users.byId(userId))!.quota_used_micros).toBe(432);
    } finally {
      await gw3.stop();
    }
  });

  it('/metrics counts the leases asked and the reservations that waited for the database', async () => {
    const { userId, keyId } = await account(null, 1);
    const sample = (text: string, name: string) => {
      const m = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
      return m ? Number(m[1]) : Number.NaN;
    };
    const read = async () => {
      const text = (await gw.call('GET', '/metrics')).body as string;
      return {
        waited: sample(text, 'modelgate_quota_leases_total{mode="waited"}'),
        ahead: sample(text, 'modelgate_quota_leases_total{mode="ahead"}'),
        waits: sample(text, 'modelgate_quota_lease_waits_total'),
      };
    };
    const before = await read();
    expect(before.waits).toBeGreaterThanOrEqual(0);
    // One at a time: leases of 1, 2 and 4 reservations are waited for, from 8 on asked ahead.
    for (let i = 0; i < 40; i++) {
      const r = await gw.services.quota.reserve({ keyId, userId, micros: 1_000 });
      await gw.services.quota.settle(r, 1_000);
    }
    await (gw.services.quota as DeferredSettleLedger).idle();
    const after = await read();
    expect(after.waited - before.waited).toBe(3);
    // Each of those, and any reservation that came while a lease asked ahead was on its way.
    expect(after.waits - before.waits).toBeGreaterThanOrEqual(3);
    expect(after.waits - before.waits).toBeLessThanOrEqual(6);
    expect(after.ahead - before.ahead).toBeGreaterThanOrEqual(1);
    await flushed();
  });

  it('shutdown gives back the credit of a key that is still busy', async () => {
    const { userId, keyId } = await account(null, 1);
    const gw3 = await startTestGateway({}, { databaseUrl: gw.databaseUrl, redis: false });
    let spent = 0;
    try {
      for (let i = 0; i < 30; i++) {
        const r = await gw3.services.quota.reserve({ keyId, userId, micros: 5_000 });
        await gw3.services.quota.settle(r, 1_000);
        spent += 1_000;
      }
      // A write on the timer keeps a busy key's credit, counted on the row.
      await gw3.services.requestLogs.flush(false);
      expect(await keyUsed(keyId)).toBeGreaterThan(spent);
      // Still busy when the shutdown comes, with nothing else queued for its write.
      const r = await gw3.services.quota.reserve({ keyId, userId, micros: 1_000 });
      await gw3.services.quota.settle(r, 1_000);
      spent += 1_000;
      expect(gw3.services.requestLogs.pending).toBe(0);
    } finally {
      await gw3.stop();
    }
    expect(await keyUsed(keyId)).toBe(spent);
    expect(await userUsed(userId)).toBe(spent);
  });

  it('rejects a negative or non-numeric estimate as a programming error', async () => {
    const { userId, keyId } = await account(null, null);
    await expect(gw.services.quota.reserve({ keyId, userId, micros: -1 })).rejects.toThrow(RangeError);
    await expect(gw.services.quota.reserve({ keyId, userId, micros: Number.NaN })).rejects.toThrow(
      RangeError,
    );
  });
});

describe('quota ledger in memory', () => {
  it('holds the same contract: limits, undo on user refusal, exact settlement', async () => {
    const keys = new MemorySpendCounter();
    const users = new MemorySpendCounter();
    keys.set(1, 10_000);
    users.set(7, 6_000);
    const ledger = new SpendLedger(keys, users);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => ledger.reserve({ keyId: 1, userId: 7, micros: 1_000 })),
    );
    const held = results.filter((r) => r.status === 'fulfilled');
    expect(held).toHaveLength(6);
    expect(keys.used(1)).toBe(6_000);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as GatewayError).status).toBe(402);
    for (const r of held) await ledger.settle(r.value, 250);
    expect(keys.used(1)).toBe(1_500);
    expect(users.used(7)).toBe(1_500);
  });
});

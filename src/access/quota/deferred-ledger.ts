/**
 * Past 400 lines on purpose: one state machine over the `Lease` records (credit, lease size, holds,
 * drop epoch) that every method reads and writes, `reserve`'s synchronous path included, and a
 * third of the file is the comments stating its invariants; split, the parts would pass that
 * state around and the invariants would span files.
 */
import { clampSpend, MAX_EXACT } from '../../store/column-bounds.js';
import type { LeaseStats, QuotaLedger, QuotaScope, Reservation, ReserveInput } from './quota-ledger.js';
import { quotaExhausted } from './quota-ledger.js';

interface HeldReservation extends Reservation {
  done: boolean;
  /** The ledger's drop count when it was held: a refund after a later drop is not credit. */
  epoch: number;
  /** The user had no limit when it was held (`ReserveInput.userLimited`): an overrun concerns the key alone. */
  keyOnly?: true;
}

function held(input: ReserveInput, micros: number, epoch: number): HeldReservation {
  const r: HeldReservation = { keyId: input.keyId, userId: input.userId, micros, done: false, epoch };
  if (input.userLimited === false) r.keyOnly = true;
  return r;
}

/** Holds on both rows at once: the refusing scope, or null when both were held. */
export interface PairReserver {
  reserve(keyId: number | null, userId: number, micros: number): Promise<QuotaScope | null>;
}

/** Where settlements wait to be written (RequestLogWriter: with the request logs, in one transaction). */
export interface SettlementQueue {
  settle(keyId: number | null, userId: number, delta: number): void;
  /** Whether a net refund for this row is queued. */
  owes(scope: QuotaScope, id: number): boolean;
  /** Writes what is queued now; with `giveBackCredit` (default) the before-write hooks give everything back. */
  flush(giveBackCredit?: boolean): Promise<void>;
  /**
   * Runs `fn` at the start of every write, before the queue is read (a last chance to queue);
   * `all` is true for `flush()` and on shutdown, false for the writes on the timer.
   */
  beforeWrite(fn: (all: boolean) => void): void;
  /** Makes a write (and its `beforeWrite`) happen within the flush interval, queued items or not. */
  wake(): void;
}

/** Largest lease, as a multiple of the reservation that asked for it. */
const MAX_LEASE_FACTOR = 64;
/** Leases are asked ahead (before the credit runs out) once they have grown to this factor. */
const PREFETCH_FACTOR = 8;
/**
 * How long a key that has gone quiet keeps its lease size (its credit goes back meanwhile).
 * Starting again from an exact lease, a key used in bursts waited for the leases of 1, 2 and
 * 4 reservations, one commit each, at the start of every burst.
 */
const LEASE_MEMORY_MS = 10_000;
/**
 * How long a key that has gone quiet keeps its credit. Given back as soon as a write found the
 * key unused, a key used in bursts (an agent between steps, a batch job between pages) started
 * every burst by waiting for a lease commit, as did every request of the burst arriving during
 * it: on PostgreSQL a few ms at the head of each burst. The cost: `quota_used` reads high by the
 * unused credit (about one lease per instance) this much longer after a key stops.
 */
const CREDIT_HOLD_MS = 5_000;

/**
 * Credit this instance has already added to a key's and its user's `quota_used` on the
 * database and not yet given to a request. Kept per key (a key has one user); a caller
 * without a key (a signed-in user) is kept under `-userId`.
 */
interface Lease {
  keyId: number | null;
  userId: number;
  credit: number;
  /** The next lease asks for `factor` times the reservation (doubles per lease, up to 64). */
  factor: number;
  /** Leases taken since the last write (that returned or kept the credit). */
  leases: number;
  /** A reservation took credit or asked for a lease since the last write: the key is busy. */
  used: boolean;
  /** When a write last found the key busy (performance.now()): its lease size is kept `leaseMemoryMs` after. */
  busyAt: number;
  /**
   * The same, for its credit (kept `creditHoldMs` after); cleared when everything is given back
   * (a flush, a change to a key or user), so a lease landing after that is not held.
   */
  holdFrom: number;
  /** A lease being asked for; reservations that find too little credit wait for it. */
  asking?: Promise<void>;
  /**
   * The ledger's drop count when this key's credit was last dropped (or the lease made): a
   * reservation or lease from before that gives its refund or surplus back to the database.
   */
  epoch: number;
}

/**
 * The quota ledger on the database: holds are leased in bulk, settlements written behind.
 *
 * **Leases.** A reservation is an atomic conditional step on the database (key and user
 * together), so limits hold across any number of instances. Doing one per request costs a
 * write transaction each (most of the gateway's CPU on SQLite, and its throughput ceiling on
 * PostgreSQL), so an instance asks for more than the request needs: the surplus is local
 * credit, already counted in `quota_used` on both rows, which the next requests of that key
 * take without the database. A request's refund (estimate minus actual cost) goes back to the
 * credit. A key's credit is returned at the start of the first request-log write (every
 * `request_logs_flush_ms`, or 200 requests) that finds it unused for `CREDIT_HOLD_MS`, so
 * `quota_used` reads high by about one lease while the key is busy and for that long plus up to
 * two flush intervals after, never low. (Returned at every write, a busy key's next request asked
 * the database for a lease, and all its requests waited for that commit, several times a second;
 * returned at the first quiet write, every burst of a bursty key began with that wait.)
 * Shutdown, an explicit flush and a change to a key or user give everything back (a refusal,
 * the refusing row's credit: see below).
 * A key's first lease is exactly its reservation; each further lease doubles (up to 64
 * reservations), so only busy keys lease ahead. A key quiet for less than `LEASE_MEMORY_MS`
 * keeps its lease size; quiet longer, it starts again from an exact lease.
 * Near the limit the database refuses the large lease; the exact reservation is then asked for,
 * and if that is refused too, this instance's credit for the refusing row is returned and the
 * question asked once more, so one instance refuses only when the quota is short with
 * everything it holds given back. Other instances' unused credit (about one lease each, while
 * they keep using the key and for `CREDIT_HOLD_MS` plus two flush intervals after) can make a
 * request be refused that early.
 *
 * **Settlements** are unconditional and commute: an overrun (actual above the estimate) is
 * queued and written with the request logs in batches; a refund becomes credit (see above).
 */
export class DeferredSettleLedger implements QuotaLedger {
  private readonly leases = new Map<number, Lease>();
  private readonly prefetching = new Set<Promise<void>>();
  readonly stats: LeaseStats = { leasesWaited: 0, leasesAhead: 0, waits: 0 };
  /**
   * How many times credit was dropped (a key or user changed: a lowered limit). A refund of a
   * reservation held before its key's last drop, or a lease asked before it, is given back to
   * the database instead of becoming credit: else the credit a drop took away came back with
   * the refunds of the requests in flight, and was spent past the new limit with no database
   * check. Each lease keeps the count of its own last drop (`Lease.epoch`).
   */
  private epoch = 0;
  /**
   * Users with an overrun settled (a key's or their own spend maybe past its limit) that no
   * reservation has written yet: the next lease of theirs writes the queue first (`ask`).
   */
  private readonly overran = new Set<number>();
  /** Shut down (`close`): credit is no longer kept, every refund and surplus is queued. */
  private closed = false;

  private readonly leaseMemoryMs: number;
  private readonly creditHoldMs: number;

  constructor(
    private readonly store: PairReserver,
    private readonly queue: SettlementQueue,
    opts: { leaseMemoryMs?: number; creditHoldMs?: number } = {},
  ) {
    this.leaseMemoryMs = opts.leaseMemoryMs ?? LEASE_MEMORY_MS;
    this.creditHoldMs = opts.creditHoldMs ?? CREDIT_HOLD_MS;
    // A busy key keeps its credit across writes: given back at each, the next request had to
    // ask the database for a lease and every other request of the key waited for that commit
    // (on PostgreSQL 1-10 ms, several times a second under load: the gateway's paced p99).
    queue.beforeWrite((all) => this.returnCredit(undefined, undefined, !all));
  }

  /** Synchronous (the reservation itself) when local credit covers it, else a promise. */
  reserve(input: ReserveInput): Reservation | Promise<Reservation> {
    // +Infinity (an estimate at an absurd price) saturates below, like any amount past the bound.
    if (Number.isNaN(input.micros) || input.micros < 0)
      return Promise.reject(
        new RangeError(`reserve: micros must be a non-negative number, got ${input.micros}`),
      );
    const { keyId, userId } = input;
    if (input.limited === false)
      return { keyId, userId, micros: 0, done: false, epoch: 0 } as HeldReservation;
    // Bounded like spend (usage-store `add`): past it no limit can hold it anyway.
    const micros = Math.min(MAX_EXACT, Math.max(1, Math.ceil(input.micros)));
    const lease = this.lease(keyId, userId);
    // A busy key's concurrent requests would each ask the database for a lease while the first
    // ask is on its way (a round trip on PostgreSQL): they wait for it and take from its credit.
    if (lease.credit < micros && lease.asking) {
      this.stats.waits++;
      return this.reserveAfter(lease.asking, input);
    }
    if (lease.credit >= micros) {
      lease.credit -= micros;
      lease.used = true;
      // A busy key asks for its next lease before it runs out, so no request waits for it.
      if (lease.factor >= PREFETCH_FACTOR && !lease.asking && lease.credit < (micros * lease.factor) / 4)
        this.prefetch(lease, micros);
      return held(input, micros, lease.epoch);
    }
    this.stats.waits++;
    this.stats.leasesWaited++;
    // Quiet past the memory: start again from an exact lease. (Checked here, on the way to the
    // database anyway: on an instance with no other traffic no later write would forget it.)
    if (!lease.used && performance.now() - lease.busyAt >= this.leaseMemoryMs) lease.factor = 1;
    const asked = this.ask(lease, micros, input);
    this.markAsking(lease, asked);
    return asked;
  }

  private async reserveAfter(asking: Promise<void>, input: ReserveInput): Promise<Reservation> {
    await asking;
    return this.reserve(input);
  }

  /** Makes `p` the lease being asked for (until it settles): reservations short of credit wait for it. */
  private markAsking(lease: Lease, p: Promise<unknown>): Promise<void> {
    const asking: Promise<void> = p.then(
      () => this.doneAsking(lease, asking),
      () => this.doneAsking(lease, asking),
    );
    lease.asking = asking;
    return asking;
  }

  private doneAsking(lease: Lease, asking: Promise<void>): void {
    if (lease.asking === asking) lease.asking = undefined;
  }

  /**
   * Asks for the next lease in the background. A refusal or a failure changes nothing: the
   * request that runs out of credit asks for itself (exact amount, credit given back first).
   */
  private prefetch(lease: Lease, micros: number): void {
    const { keyId, userId, factor } = lease;
    const ask = micros * factor;
    const epoch = lease.epoch;
    this.stats.leasesAhead++;
    const granted = this.store.reserve(keyId, userId, ask).then((refused) => {
      if (refused) return;
      // Asked before the credit was dropped: given back, not kept.
      if (this.lease(keyId, userId).epoch !== epoch || this.closed)
        return this.queue.settle(keyId, userId, -ask);
      const now = this.lease(keyId, userId);
      now.credit += ask;
      now.leases++;
      now.factor = Math.min(MAX_LEASE_FACTOR, now.factor * 2);
      // The write that gives credit back may have run while this lease was on its way, and a key
      // that goes quiet queues nothing that would bring the next one: without this, the credit
      // stayed counted in quota_used (refusing other instances early) until the key's next use.
      this.queue.wake();
    }, this.failed);
    const asking = this.markAsking(lease, granted);
    this.prefetching.add(asking);
    void asking.then(() => this.prefetching.delete(asking));
  }

  /**
   * Resolves once no lease is being asked for in the background. Shutdown waits for it before
   * the last write, which gives all credit back: a lease granted after that would stay counted.
   */
  async idle(): Promise<void> {
    while (this.prefetching.size > 0) await Promise.all(this.prefetching);
  }

  /**
   * On shutdown, before the request-log writer's last write: waits for the leases asked ahead,
   * then gives every key's credit back and keeps none from then on. A refund that comes later
   * (a request still settling, a lease landing) is queued as a settlement, not added to credit
   * that nothing would give back: else the key's `quota_used` stayed up by it for good.
   */
  async close(): Promise<void> {
    await this.idle();
    this.closed = true;
    this.dropCredit();
  }

  private async ask(lease: Lease, micros: number, input: ReserveInput): Promise<Reservation> {
    const { keyId, userId } = input;
    // An overrun of this user's is queued: written first, so the database sees the rows it may
    // have taken past their limits before it is asked to hold more on them.
    // A failed write leaves the question to the database as it stands.
    if (this.overran.delete(userId)) await this.queue.flush(false).catch(() => {});
    const ask = micros * lease.factor;
    const epoch = lease.epoch;
    let granted = ask;
    let refused = await this.store.reserve(keyId, userId, ask).catch(this.failed);
    if (refused && ask > micros) {
      lease.factor = 1;
      granted = micros;
      refused = await this.store.reserve(keyId, userId, micros);
    }
    if (refused) {
      // Give back what this instance holds on the refusing row, write it, and ask again.
      const id = refused === 'key' ? keyId! : userId;
      this.returnCredit(refused, id);
      if (this.queue.owes(refused, id)) {
        // Only this row's credit: other busy keys keep theirs (else each waits for a lease).
        await this.queue.flush(false);
        refused = await this.store.reserve(keyId, userId, micros);
      }
    }
    if (refused) throw quotaExhausted(refused, refused === 'key' ? keyId! : userId, micros);
    // Credit may have been returned (a write started) while we waited: add to what is there now.
    // Dropped meanwhile (a lowered limit): the surplus goes back instead, and so will the
    // reservation's refund.
    const now = this.lease(keyId, userId);
    if (now.epoch !== epoch || this.closed) {
      if (granted > micros) this.queue.settle(keyId, userId, -(granted - micros));
    } else {
      now.credit += granted - micros;
      if (granted === ask) now.factor = Math.min(MAX_LEASE_FACTOR, now.factor * 2);
      if (granted > micros) this.queue.wake();
    }
    now.leases++;
    now.used = true;
    return held(input, micros, epoch);
  }

  /**
   * A reservation that failed may still have been granted (its answer lost): the store gives it
   * back in a write, which must come even if nothing else is queued.
   */
  private readonly failed = (err: unknown): never => {
    this.queue.wake();
    throw err;
  };

  /** Synchronous: a refund becomes credit, an overrun is queued with the request logs. */
  settle(reservation: Reservation, actualMicros: number): void {
    const held = reservation as HeldReservation;
    if (held.done) return;
    held.done = true;
    // Clamped: a bigint overflow on PostgreSQL would refuse the settlement, and every retry.
    const actual = clampSpend(actualMicros);
    const refund = held.micros - actual;
    // A refund of a hold stays counted on the database: it is credit for the next request, unless
    // the credit was dropped since the hold (a lowered limit): then it goes back to the database.
    if (refund > 0) {
      const lease = this.lease(held.keyId, held.userId);
      if (held.epoch === lease.epoch && !this.closed) lease.credit += refund;
      else this.queue.settle(held.keyId, held.userId, -refund);
    }
    // Unconditional: the work is done, its cost is owed even past the limit.
    else if (refund < 0) {
      this.queue.settle(held.keyId, held.userId, -refund);
      // A limited hold (an unlimited one holds 0) that overran may have taken its key or user
      // past the limit, which this instance cannot see: its credit on both (every key of the
      // user) goes back, so the next reservation asks the database, after the overrun is
      // written (`ask`). Served from the credit, a key past its limit was served on.
      // Held before this, a refund goes back too (`epoch`); the lease size stays: a key whose
      // answers often overrun (web searches) still leases ahead while under its limit.
      // A user without a limit cannot be past one: then only the key's credit goes, and the
      // user's other busy keys keep theirs (else each of them waited for a lease after it).
      if (held.micros > 0) {
        this.overran.add(held.userId);
        const epoch = ++this.epoch;
        const keyOnly = held.keyOnly === true && held.keyId !== null;
        for (const l of this.leases.values())
          if (keyOnly ? l.keyId === held.keyId : l.userId === held.userId) l.epoch = epoch;
        if (keyOnly) this.returnCredit('key', held.keyId!, false, true);
        else this.returnCredit('user', held.userId, false, true);
      }
    }
  }

  release(reservation: Reservation): void {
    this.settle(reservation, 0);
  }

  /**
   * Gives credit back (written with the next batch), so the next reservation asks the database
   * again: called when a key or user changed, e.g. a lowered limit. `scope` names the key (its
   * credit) or the user (the credit of each of their keys) when the change was about one; without
   * it, every key's.
   */
  dropCredit(scope?: { keyId?: number; userId?: number }): void {
    const epoch = ++this.epoch;
    const keyId = scope?.keyId;
    const userId = keyId === undefined ? scope?.userId : undefined;
    for (const l of this.leases.values())
      if ((keyId === undefined || l.keyId === keyId) && (userId === undefined || l.userId === userId))
        l.epoch = epoch;
    if (keyId !== undefined) this.returnCredit('key', keyId);
    else if (userId !== undefined) this.returnCredit('user', userId);
    else this.returnCredit();
  }

  /** Micro-USD leased and not given to a request, summed over keys (for tests and metrics). */
  get credit(): number {
    let sum = 0;
    for (const l of this.leases.values()) sum += l.credit;
    return sum;
  }

  private lease(keyId: number | null, userId: number): Lease {
    const k = keyId ?? -userId;
    let l = this.leases.get(k);
    if (!l) {
      l = {
        keyId,
        userId,
        credit: 0,
        factor: 1,
        leases: 0,
        used: false,
        busyAt: -Infinity,
        holdFrom: -Infinity,
        // A new lease is after every drop so far (a reservation that outlived the old one, with
        // an older count, gives its refund back).
        epoch: this.epoch,
      };
      this.leases.set(k, l);
    }
    return l;
  }

  /**
   * Queues the unused credit to be taken off `quota_used` (all of it, or only what touches one
   * row). Keys that leased nothing since the last return start again from an exact lease.
   * `keepBusy` (a write on the timer): a key used since the last write, or found used by a write
   * less than `creditHoldMs` ago, keeps its credit, and a write is woken for the next interval
   * so the credit goes back once the hold has run out; a quiet key keeps its lease size for
   * `leaseMemoryMs`. `keepFactor` (an overrun): the keys keep their lease size.
   */
  private returnCredit(scope?: QuotaScope, id?: number, keepBusy = false, keepFactor = false): void {
    let kept = false;
    const now = keepBusy ? performance.now() : 0;
    for (const [k, l] of this.leases) {
      if (scope === 'key' && l.keyId !== id) continue;
      if (scope === 'user' && l.userId !== id) continue;
      if (keepBusy && l.used) {
        l.used = false;
        l.leases = 0;
        l.busyAt = now;
        l.holdFrom = now;
        kept ||= l.credit > 0;
        continue;
      }
      // Quiet for less than the hold: kept too, and a write woken to look again (with nothing
      // else queued, a write is a timer turn: no transaction).
      if (keepBusy && l.credit > 0 && now - l.holdFrom < this.creditHoldMs) {
        kept = true;
        continue;
      }
      if (l.credit > 0) this.queue.settle(l.keyId, l.userId, -l.credit);
      l.credit = 0;
      l.used = false;
      if (!keepBusy) l.holdFrom = -Infinity;
      if (scope) {
        if (!keepFactor) l.factor = 1;
      } else if (l.leases === 0 && !l.asking && !(keepBusy && now - l.busyAt < this.leaseMemoryMs))
        this.leases.delete(k);
      l.leases = 0;
    }
    if (kept) this.queue.wake();
  }
}

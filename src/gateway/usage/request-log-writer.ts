import { randomUUID } from 'node:crypto';
import { isRefusedData } from '../../store/db-errors.js';
import type { NewRequestLogRow } from '../../store/logs-repo.js';
import type { BatchMark, SpendDeltas, SpendScope } from '../../store/usage-store.js';
import {
  type Batch,
  bump,
  formBatch,
  type Item,
  lostItems,
  Settlement,
  SettlementGroup,
} from './log-buffer.js';
import { type RequestLogEntry, toLogRow } from './request-log-entry.js';

/**
 * Where batches go: LogsRepo, rows and the spend settled with them in one transaction. `mark`
 * names the batch: a sink that cannot tell a lost answer from a failure (PostgreSQL) skips a
 * batch it already committed under that mark.
 */
export interface RequestLogSink {
  insertMany(rows: NewRequestLogRow[], spend?: SpendDeltas, mark?: BatchMark): Promise<void>;
  /** Whether the sink has work of its own for the next write, rows or not (a hold to give back). */
  pending?(): boolean;
}

export interface RequestLogWriterOptions {
  /** Flush this long after the first waiting entry (log.request_logs_flush_ms). */
  flushMs: number;
  /** Flush at once when this many entries wait (log.request_logs_batch). */
  batch: number;
  /**
   * Most rows per transaction (default `batch`); a batch is written as several transactions, an
   * event-loop turn apart. For a synchronous driver (SQLite), whose write blocks the event loop,
   * so that a request arriving during a flush waits for a slice of it, not the whole batch.
   */
  rowsPerWrite?: number;
  /** Entries held at most while the database is failing; beyond it new entries are dropped. */
  maxBuffered?: number;
  /**
   * Longest wait between retries of a failing flush (default 5 s). A retry on a database that
   * is down costs a failed connection attempt; after the outage, rows and settlements wait for
   * the next retry (see `databaseBack`).
   */
  maxBackoffMs?: number;
  /** Attempts `close()` makes before giving up on what is still buffered. */
  closeAttempts?: number;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Request logs and quota settlements, written off the request path: `record` and `settle` only
 * push to one ordered buffer; batches are written every `flushMs` or as soon as `batch` entries
 * wait, each batch (its rows and the settlements queued among them) in one transaction, so the
 * settled spend equals the sum of logged costs at every commit (a request settles, then logs).
 * Settlements commute, so summing them per row loses nothing. A failing write keeps its items
 * and retries with exponential backoff; the log rows are bounded so a long outage costs memory
 * only up to `maxBuffered` entries (with a warning naming how many were dropped). Settlements
 * are never dropped: they are owed money, a few bytes each.
 */
export class RequestLogWriter {
  /**
   * The queue: `buffer` from index `head` on. Written items are passed by moving `head`, not
   * spliced off (a splice moves every item behind them: after a long batch refused for its data,
   * written one row at a time, that was quadratic, minutes of CPU for 100,000 rows); the written
   * front is cut off once it is most of the array.
   */
  private buffer: Item[] = [];
  private head = 0;
  /** This writer's name in batch marks, and its last batch's number. */
  private readonly id = randomUUID();
  private seq = 0;
  /** The batch at the front of the buffer once formed, until it is written (or refused). */
  private formed: Batch | undefined;
  /** Rows at the front still to be written one to a batch, after a batch refused for its data. */
  private isolating = 0;
  private rows = 0;
  /** Unwritten settlement totals per row, so a refused reservation can tell if credit waits. */
  private readonly owed = { key: new Map<number, number>(), user: new Map<number, number>() };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  /** When a failure of the outage under way was last logged (Date.now()). */
  private failureLogged = 0;
  private dropped = 0;
  private closed = false;
  /** `close()` has returned: nothing retries a failed write any more. */
  private finished = false;
  private readonly maxBuffered: number;
  private readonly maxBackoffMs: number;
  /** Rows per transaction: `rowsPerWrite`, within 1..batch. */
  private readonly perWrite: number;
  private readonly log: NonNullable<RequestLogWriterOptions['log']>;
  private readonly beforeWriteHooks: Array<(all: boolean) => void> = [];
  private readonly observers: Array<(entry: RequestLogEntry) => void> = [];

  constructor(
    private readonly sink: RequestLogSink,
    private readonly opts: RequestLogWriterOptions,
  ) {
    this.maxBuffered = opts.maxBuffered ?? Math.max(100_000, opts.batch * 20);
    this.maxBackoffMs = opts.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
    this.perWrite = Math.max(1, Math.min(opts.rowsPerWrite ?? opts.batch, opts.batch));
    this.log = opts.log ?? {
      warn: (o, m) => console.warn(m, o),
      error: (o, m) => console.error(m, o),
    };
  }

  /** Log entries waiting to be written (including a batch being inserted). */
  get pending(): number {
    return this.rows;
  }

  /**
   * `fn` sees every recorded entry, after it is buffered (metrics, rate-limit corrections): the
   * one place where both chat and embeddings report a finished request. Best effort: what it
   * throws is ignored, the request is already answered.
   */
  observe(fn: (entry: RequestLogEntry) => void): void {
    this.observers.push(fn);
  }

  /** Never blocks and never throws: the request is already answered. */
  record(entry: RequestLogEntry): void {
    this.buffered(entry);
    for (const fn of this.observers) {
      try {
        fn(entry);
      } catch {
        // Metrics and limit corrections are best effort.
      }
    }
  }

  private buffered(entry: RequestLogEntry): void {
    if (this.rows >= this.maxBuffered) {
      if (this.dropped++ === 0)
        this.log.warn(
          { buffered: this.rows, max: this.maxBuffered },
          'request log buffer full (database failing?): dropping new request logs until it drains',
        );
      return;
    }
    this.buffer.push(toLogRow(entry, Math.floor(Date.now() / 1000)));
    this.rows++;
    this.queued();
  }

  /**
   * Queues `delta` micro-USD for the key (when not null) and the user, written with the next
   * batch. Only for unconditional moves (settlements): a limit check must not wait.
   */
  settle(keyId: number | null, userId: number, delta: number): void {
    if (delta === 0) return;
    this.buffer.push(new Settlement(keyId, userId, delta));
    if (keyId !== null) bump(this.owed.key, keyId, delta);
    bump(this.owed.user, userId, delta);
    this.queued();
  }

  /**
   * `fn` runs at the start of every write, before the buffer is read (the quota ledger returns
   * credit); `all` is true for `flush()` and on shutdown (everything is to be given back).
   */
  beforeWrite(fn: (all: boolean) => void): void {
    this.beforeWriteHooks.push(fn);
  }

  /** A write within `flushMs` even if nothing is queued: its `beforeWrite` hooks have something to give back. */
  wake(): void {
    if (!this.closed) this.kick(this.opts.flushMs);
  }

  /**
   * Something else reached the database again (the registry's poll, every second): a write that
   * is waiting out its backoff is tried now instead of at the end of it. Nothing otherwise.
   */
  databaseBack(): void {
    if (this.failures === 0 || this.closed || this.running) return;
    this.retryIn(0);
  }

  /** Whether settled credit (a net refund) for this row waits to be written. */
  owes(scope: SpendScope, id: number): boolean {
    return (this.owed[scope].get(id) ?? 0) < 0;
  }

  private queued(): void {
    // Whether the loss is reported is decided when the write fails, not now: an entry queued
    // during close() whose write fails after close() returned would be dropped unsaid.
    if (this.closed)
      return void this.flush().catch((err: unknown) => {
        if (this.finished) this.lostLate(err);
      });
    if (this.rows >= this.opts.batch && this.failures === 0) {
      // While a write runs, its end looks again (see `flush`): a write started now would only
      // take the few entries that came in since, a transaction per few rows on a slow database.
      if (!this.running) this.kick(0);
    } else this.kick(this.opts.flushMs);
  }

  /**
   * Writes everything buffered now; rejects if the database refuses (entries are kept). With
   * `giveBackCredit` (the default) the quota ledger first gives back all the credit it leased,
   * so `quota_used` reads exact after it; the writes on the timer and on full batches keep a
   * busy key's credit (see DeferredSettleLedger).
   */
  flush(giveBackCredit = true): Promise<void> {
    return this.write(false, giveBackCredit);
  }

  /**
   * `wholeBatches`: leave a partial batch at the end for its timer (a write kicked by a full
   * batch). `all`: the before-write hooks give everything back (a flush, shutdown).
   */
  private write(wholeBatches: boolean, all: boolean): Promise<void> {
    // One write at a time; a flush asked for during one runs after it (a failed one included).
    const run = (this.running ?? Promise.resolve()).catch(() => {}).then(() => this.drain(wholeBatches, all));
    this.running = run;
    run
      .finally(() => {
        if (this.running !== run) return;
        this.running = undefined;
        // What came in during the write: a full batch goes now, a partial one on the timer.
        if (this.closed || this.failures > 0 || this.rows === 0) return;
        this.kick(this.rows >= this.opts.batch ? 0 : this.opts.flushMs);
      })
      .catch(() => {});
    return run;
  }

  /** Final flush on shutdown, retrying a failing database a few times before giving up. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const attempts = this.opts.closeAttempts ?? 5;
    this.runBeforeWrite(true);
    // The sink's own work counts too (a reservation whose answer was lost, to give back): with
    // nothing buffered it was left undone, and the key's spend stayed up by that hold.
    try {
      for (let i = 1; this.queuedItems > 0 || this.running || this.sink.pending?.() === true; i++) {
        try {
          await this.flush();
        } catch (err) {
          if (i >= attempts) return this.lose(err, 'request logs could not be written on shutdown');
          await sleep(Math.min(this.maxBackoffMs, this.opts.flushMs * 2 ** i));
        }
      }
    } finally {
      this.finished = true;
    }
  }

  /**
   * Reports, at error level, what is buffered and will never be written (rows, and the spend the
   * settlements owed: a key's `quota_used` stays off by it), and lets go of it.
   */
  private lose(err: unknown, msg: string): void {
    this.log.error({ err, lost: this.rows, ...lostItems(this.buffer.slice(this.head)) }, msg);
    this.buffer = [];
    this.head = 0;
    this.rows = 0;
    this.formed = undefined;
    this.isolating = 0;
  }

  /** A row or settlement that came after `close()` returned and could not be written alone. */
  private readonly lostLate = (err: unknown): void => {
    if (this.queuedItems > 0)
      this.lose(err, 'request log or quota settlement came after shutdown and could not be written');
  };

  private kick(delayMs: number): void {
    if (this.closed) return;
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write(delayMs === 0, false).catch(() => {});
    }, delayMs);
    this.timer.unref();
  }

  private runBeforeWrite(all: boolean): void {
    for (const fn of this.beforeWriteHooks) {
      try {
        fn(all || this.closed);
      } catch (err) {
        this.log.error({ err }, 'request log writer: a before-write hook failed');
      }
    }
  }

  private async drain(wholeBatches: boolean, all: boolean): Promise<void> {
    this.runBeforeWrite(all);
    // Only what waits now: entries recorded while this runs wait for their own batch or timer,
    // so under load every write carries full batches instead of the few rows of one turn.
    let todo = this.queuedItems;
    // Kicked by a full batch: whole batches only; the tail goes with the next one or on the timer.
    let rowsLeft = wholeBatches ? this.rows - (this.rows % this.opts.batch) : Number.POSITIVE_INFINITY;
    // Nothing queued, but the sink has something to do in a write: one empty batch.
    let empty = todo === 0 && this.sink.pending?.() === true;
    while (todo > 0 || empty) {
      empty = false;
      if (rowsLeft <= 0) {
        if (this.rows > 0) this.kick(this.opts.flushMs);
        return;
      }
      // Up to `perWrite` rows and the settlements queued before the next row.
      this.formed ??= this.form(todo, Math.min(this.perWrite, rowsLeft));
      let done: { items: number; rows: number };
      try {
        done = await this.writeBatch(this.formed);
      } catch (err) {
        this.failures++;
        const wait = Math.min(this.maxBackoffMs, this.opts.flushMs * 2 ** this.failures);
        // After `close()` no one retries: the caller reports what is lost (`lostLate`). An outage's
        // first failure is logged, then one line a minute: a retry every few seconds is not news.
        const now = Date.now();
        if (!this.finished && (this.failures === 1 || now - this.failureLogged >= OUTAGE_LOG_EVERY_MS)) {
          this.failureLogged = now;
          this.log.warn(
            { err, buffered: this.queuedItems, failures: this.failures, retry_ms: wait },
            this.failures === 1 ? 'request log flush failed; will retry' : 'request log flush still failing',
          );
        }
        if (!this.closed) this.retryIn(wait);
        throw err;
      }
      // Only the writer removes from the front, and one drain runs at a time.
      todo -= done.items;
      rowsLeft -= done.rows;
      if (this.failures > 0 || this.dropped > 0)
        this.log.warn({ dropped: this.dropped, failures: this.failures }, 'request log writes recovered');
      this.failures = 0;
      this.dropped = 0;
      // A long backlog (or a batch in slices) is written one transaction per event-loop turn,
      // so requests run in between.
      if (todo > 0) await new Promise((r) => setImmediate(r));
    }
  }

  /** The next batch from the front of the buffer: at most `limit` rows of its first `todo` items. */
  private form(todo: number, limit: number): Batch {
    // Numbered in the order formed; a batch is written (or refused) before the next is formed.
    const mark = { writer: this.id, seq: ++this.seq };
    return formBatch(this.buffer, this.head, todo, limit, this.isolating > 0, mark);
  }

  /** Items queued and not yet written. */
  private get queuedItems(): number {
    return this.buffer.length - this.head;
  }

  /** Takes the first `n` queued items off the queue (written or dropped). */
  private dropFront(n: number): void {
    this.head += n;
    if (this.head === this.buffer.length) {
      this.buffer = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.buffer.length) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Writes `b` and takes its items off the buffer; returns how many items and rows left it. A
   * failure leaves `b` formed, to be retried as it is.
   */
  private async writeBatch(b: Batch): Promise<{ items: number; rows: number }> {
    try {
      await this.sink.insertMany(b.rows, b.spend, b.mark);
    } catch (err) {
      if (!isRefusedData(err)) throw err;
      this.formed = undefined;
      return this.isolate(b, err);
    }
    this.formed = undefined;
    this.dropFront(b.n);
    this.rows -= b.rows.length;
    if (b.rows.length > 0 && this.isolating > 0) this.isolating--;
    if (b.spend) this.paid(b.spend);
    return { items: b.n, rows: b.rows.length };
  }

  private paid(spend: SpendDeltas): void {
    for (const [id, d] of spend.keys) bump(this.owed.key, id, -d);
    for (const [id, d] of spend.users) bump(this.owed.user, id, -d);
  }

  /**
   * A batch refused for its data (a row no sanitizing in `toLogRow` foresaw): written again as
   * it is, it would be refused forever and hold back every later row and settlement. A single
   * row refused alone is dropped and reported. Otherwise the batch's settlements are summed
   * into one item written alone (owed money is never dropped) and its rows follow, each to be
   * written in a batch of its own. Nothing is written here: each of those is a batch like any
   * other, with its own mark, so a lost answer midway cannot write one twice either.
   */
  private isolate(b: Batch, cause: unknown): { items: number; rows: number } {
    if (b.rows.length === 1 && !b.spend) {
      const row = b.rows[0]!;
      this.log.error(
        { err: cause, request_id: row.request_id, model: row.model, status: row.status },
        'request log row refused by the database; dropped',
      );
      this.dropFront(b.n);
      this.rows--;
      if (this.isolating > 0) this.isolating--;
      return { items: b.n, rows: 1 };
    }
    // Summed settlements alone cannot be refused for their data (integers within bounds); if
    // they are, the write fails and is retried like an outage.
    if (b.rows.length === 0) throw cause;
    this.log.error(
      { err: cause, rows: b.rows.length },
      'request log batch refused by the database; writing it row by row',
    );
    // What stays of the n items: the settlements' sum, then the rows in order (no spread: a
    // batch can be long).
    const front: Item[] = b.spend ? [new SettlementGroup(b.spend)] : [];
    this.buffer = front.concat(b.rows, this.buffer.slice(this.head + b.n));
    this.head = 0;
    this.isolating = b.rows.length;
    return { items: b.n - front.length - b.rows.length, rows: 0 };
  }

  private retryIn(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write(false, false).catch(() => {});
    }, ms);
    this.timer.unref();
  }
}

/** See `RequestLogWriterOptions.maxBackoffMs`. */
const DEFAULT_MAX_BACKOFF_MS = 5_000;
/** While writes keep failing, one log line a minute. */
const OUTAGE_LOG_EVERY_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

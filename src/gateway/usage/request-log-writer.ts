import type { NewRequestLogRow } from '../../store/logs-repo.js';
import { type RequestLogEntry, toLogRow } from './request-log-entry.js';

/** Where batches go: LogsRepo, one multi-row INSERT per batch. */
export interface RequestLogSink {
  insertMany(rows: NewRequestLogRow[]): Promise<void>;
}

export interface RequestLogWriterOptions {
  /** Flush this long after the first waiting entry (log.request_logs_flush_ms). */
  flushMs: number;
  /** Flush at once when this many entries wait (log.request_logs_batch). */
  batch: number;
  /** Entries held at most while the database is failing; beyond it new entries are dropped. */
  maxBuffered?: number;
  /** Longest wait between retries of a failing flush. */
  maxBackoffMs?: number;
  /** Attempts `close()` makes before giving up on what is still buffered. */
  closeAttempts?: number;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Request logs, written off the request path: `record` only pushes to a buffer; batches are
 * inserted every `flushMs` or as soon as `batch` entries wait. A failing insert keeps its rows
 * and retries with exponential backoff; the buffer is bounded so a long outage costs memory
 * only up to `maxBuffered` entries (with a warning naming how many were dropped).
 */
export class RequestLogWriter {
  private buffer: NewRequestLogRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  private dropped = 0;
  private closed = false;
  private readonly maxBuffered: number;
  private readonly maxBackoffMs: number;
  private readonly log: NonNullable<RequestLogWriterOptions['log']>;

  constructor(
    private readonly sink: RequestLogSink,
    private readonly opts: RequestLogWriterOptions,
  ) {
    this.maxBuffered = opts.maxBuffered ?? Math.max(100_000, opts.batch * 20);
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.log = opts.log ?? {
      warn: (o, m) => console.warn(m, o),
      error: (o, m) => console.error(m, o),
    };
  }

  /** Entries waiting to be written (including a batch being inserted). */
  get pending(): number {
    return this.buffer.length;
  }

  /** Never blocks and never throws: the request is already answered. */
  record(entry: RequestLogEntry): void {
    if (this.buffer.length >= this.maxBuffered) {
      if (this.dropped++ === 0)
        this.log.warn(
          { buffered: this.buffer.length, max: this.maxBuffered },
          'request log buffer full (database failing?): dropping new request logs until it drains',
        );
      return;
    }
    this.buffer.push(toLogRow(entry, Math.floor(Date.now() / 1000)));
    if (this.closed) return void this.flush().catch(() => {});
    if (this.buffer.length >= this.opts.batch && this.failures === 0) this.kick(0);
    else this.kick(this.opts.flushMs);
  }

  /** Writes everything buffered now; rejects if the database refuses (entries are kept). */
  flush(): Promise<void> {
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Final flush on shutdown, retrying a failing database a few times before giving up. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const attempts = this.opts.closeAttempts ?? 5;
    for (let i = 1; this.buffer.length > 0 || this.running; i++) {
      try {
        await this.flush();
      } catch (err) {
        if (i >= attempts) {
          this.log.error({ err, lost: this.buffer.length }, 'request logs could not be written on shutdown');
          return;
        }
        await sleep(Math.min(this.maxBackoffMs, this.opts.flushMs * 2 ** i));
      }
    }
  }

  private kick(delayMs: number): void {
    if (this.closed) return;
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => {});
    }, delayMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const rows = this.buffer.slice(0, this.opts.batch);
      try {
        await this.sink.insertMany(rows);
      } catch (err) {
        this.failures++;
        const wait = Math.min(this.maxBackoffMs, this.opts.flushMs * 2 ** this.failures);
        this.log.warn(
          { err, buffered: this.buffer.length, failures: this.failures, retry_ms: wait },
          'request log flush failed; will retry',
        );
        if (!this.closed) this.retryIn(wait);
        throw err;
      }
      // Only the writer removes from the front, and one drain runs at a time.
      this.buffer.splice(0, rows.length);
      if (this.failures > 0 || this.dropped > 0)
        this.log.warn({ dropped: this.dropped }, 'request log writes recovered');
      this.failures = 0;
      this.dropped = 0;
    }
  }

  private retryIn(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => {});
    }, ms);
    this.timer.unref();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

// Plain CommonJS run by the worker (eval), so it works the same from sources, tsx and dist/.
// It reports `idle` and exits (after a last checkpoint) once `idleChecks` checkpoints in a row
// found every frame of an unchanged WAL already copied, i.e. nothing was written meanwhile.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 5000');
let lastLog = -1;
let idle = 0;
const checkpoint = () => {
  try {
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
    idle = r && r.log === lastLog && r.checkpointed === r.log ? idle + 1 : 0;
    lastLog = r ? r.log : -1;
  } catch (err) {
    idle = 0;
    parentPort.postMessage({ error: String(err) });
  }
};
let done = false;
const finish = () => {
  if (done) return;
  done = true;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
};
const timer = setInterval(() => {
  checkpoint();
  if (idle >= workerData.idleChecks) {
    parentPort.postMessage({ idle: true });
    finish();
  }
}, workerData.intervalMs);
parentPort.on('message', finish);
`;

export interface CheckpointerOptions {
  /** How often the worker checkpoints, and how often the main thread looks at its write count. */
  intervalMs?: number;
  /** Rows this connection changes (total_changes) before a stopped worker is started again. */
  startAfterChanges?: number;
  /** Checkpoints in a row with nothing new to copy before the worker exits. */
  idleChecks?: number;
}

export interface Checkpointer {
  /** Whether the worker thread is running now. */
  readonly running: boolean;
  stop(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the event loop. SQLite checkpoints automatically inside the commit
 * that crosses 1,000 WAL pages, and a checkpoint fsyncs the WAL and the database file: measured
 * here, 1 in ~500 reservations took 2-5 ms on an idle disk (tens of ms on a busy one), which
 * was the gateway's p99 stall. A worker thread with its own connection runs a PASSIVE checkpoint
 * (never blocks writers) every `intervalMs`; the main connection stops checkpointing. If the
 * worker dies, automatic checkpoints come back on, so the WAL can never grow without bound.
 *
 * The worker runs only while there is something to checkpoint: it costs ~9 MB of RSS (a thread
 * with its own V8 isolate and Node environment; smaller heap limits do not lower that), so it
 * exits after `idleChecks` checkpoints with nothing new, and the main thread starts it again
 * once its connection has changed `startAfterChanges` rows (a few MB of WAL at most, about what
 * SQLite's own threshold lets grow). An idle gateway holds no thread; a busy one keeps it.
 */
export function startCheckpointer(
  conn: SQLite.Database,
  file: string,
  opts: CheckpointerOptions = {},
): Checkpointer {
  const intervalMs = opts.intervalMs ?? 1000;
  const startAfterChanges = opts.startAfterChanges ?? 500;
  const idleChecks = opts.idleChecks ?? 30;
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const changes = conn.prepare('select total_changes()').pluck();
  conn.pragma('wal_autocheckpoint = 0');
  let worker: { thread: Worker; exited: Promise<unknown> } | undefined;
  let since = 0;
  let stopped = false;
  let failed = false;
  const fallback = () => {
    failed = true;
    if (!stopped && conn.open) conn.pragma('wal_autocheckpoint = 1000');
  };
  const spawn = () => {
    const w = new Worker(WORKER, {
      eval: true,
      // A few statements every second: the smallest heap V8 allows keeps the thread cheap.
      resourceLimits: {
        maxYoungGenerationSizeMb: 1,
        maxOldGenerationSizeMb: 8,
        codeRangeSizeMb: 4,
        stackSizeMb: 1,
      },
      workerData: { driver, file, intervalMs, idleChecks },
    });
    w.unref();
    const current = { thread: w, exited: new Promise((r) => w.once('exit', r)) };
    let idleExit = false;
    w.on('message', (m: { idle?: boolean }) => {
      if (m?.idle) idleExit = true;
    });
    w.on('error', fallback);
    w.on('exit', () => {
      if (worker === current) worker = undefined;
      if (!idleExit && !stopped) fallback();
      else if (conn.open) since = changes.get() as number;
    });
    worker = current;
  };
  const poll = setInterval(() => {
    if (worker || failed || stopped || !conn.open) return;
    if ((changes.get() as number) - since >= startAfterChanges) spawn();
  }, intervalMs);
  poll.unref();
  return {
    get running() {
      return worker !== undefined;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(poll);
      const w = worker;
      if (!w) return;
      w.thread.postMessage('stop');
      const timer = setTimeout(() => void w.thread.terminate(), 5000);
      await w.exited;
      clearTimeout(timer);
    },
  };
}

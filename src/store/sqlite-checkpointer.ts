import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

// Plain CommonJS run by the worker (eval), so it works the same from sources, tsx and dist/.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 5000');
const checkpoint = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage(String(err)); }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); checkpoint(); db.close(); parentPort.close(); });
`;

/**
 * Moves WAL checkpoints off the event loop. SQLite checkpoints automatically inside the commit
 * that crosses 1,000 WAL pages, and a checkpoint fsyncs the WAL and the database file: measured
 * here, 1 in ~500 reservations took 2-5 ms on an idle disk (tens of ms on a busy one), which
 * was the gateway's p99 stall. A worker thread with its own connection runs a PASSIVE checkpoint
 * (never blocks writers) every `intervalMs`; the main connection stops checkpointing. If the
 * worker dies, automatic checkpoints come back on, so the WAL can never grow without bound.
 */
export function startCheckpointer(
  conn: SQLite.Database,
  file: string,
  intervalMs = 1000,
): { stop(): Promise<void> } {
  const worker = new Worker(WORKER, {
    eval: true,
    // A few statements every second: the smallest heap V8 allows keeps the thread cheap.
    resourceLimits: {
      maxYoungGenerationSizeMb: 1,
      maxOldGenerationSizeMb: 8,
      codeRangeSizeMb: 4,
      stackSizeMb: 1,
    },
    workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file, intervalMs },
  });
  worker.unref();
  conn.pragma('wal_autocheckpoint = 0');
  let stopped = false;
  const fallback = () => {
    if (!stopped && conn.open) conn.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('error', fallback);
  worker.on('exit', fallback);
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      const exited = new Promise((r) => worker.once('exit', r));
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// A probe for any node process of a bench run, loaded with
//   NODE_OPTIONS="--import ./bench/loop-probe.mjs" npm run bench -- ...
// (bench/procs.ts cleanEnv passes NODE_OPTIONS to every process it starts). Each process appends
// to <LOOP_PROBE_DIR or $TMPDIR/modelgate-loop-probe>/p-<pid>.log: its start time and command,
// every event-loop block over LOOP_PROBE_BLOCK_MS (a 5 ms interval timer firing that late: its
// JavaScript ran, or the thread was not scheduled) with the process's CPU time and RSS then, and
// every GC pause over LOOP_PROBE_GC_MS. Times are seconds since the process started the probe.
// Appends are synchronous and rare (only past the thresholds), so the probe itself costs a timer.
import { appendFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';

const dir = process.env.LOOP_PROBE_DIR ?? join(tmpdir(), 'modelgate-loop-probe');
const blockMs = Number(process.env.LOOP_PROBE_BLOCK_MS ?? 40);
const gcMs = Number(process.env.LOOP_PROBE_GC_MS ?? 15);
mkdirSync(dir, { recursive: true });
const file = join(dir, `p-${process.pid}.log`);
const t0 = performance.now();
const at = (ms) => `${((ms - t0) / 1000).toFixed(2)}s`;
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};
const who = [process.argv[1] ?? 'node', ...process.argv.slice(2)].join(' ').slice(0, 120);
appendFileSync(file, `start ${new Date(performance.timeOrigin + t0).toISOString()} ${who}\n`);
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if (e.duration > gcMs) {
      const heap = (process.memoryUsage().heapUsed / 1048576).toFixed(0);
      appendFileSync(
        file,
        `gc ${at(e.startTime)} ${kinds[e.detail?.kind] ?? e.detail?.kind} ${e.duration.toFixed(1)}ms heap=${heap}MB\n`,
      );
    }
}).observe({ entryTypes: ['gc'] });
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - last > blockMs) {
    const { user, system } = process.cpuUsage();
    const rss = (process.memoryUsage.rss() / 1048576).toFixed(0);
    appendFileSync(
      file,
      `block ${at(last)} ${(now - last).toFixed(1)}ms cpu_ms=${((user + system) / 1000).toFixed(0)} rss=${rss}MB\n`,
    );
  }
  last = now;
}, 5).unref();

// A probe for any node process of a bench run, loaded with
//   NODE_OPTIONS="--import ./bench/loop-probe.mjs" npm run bench -- ...
// (bench/procs.ts cleanEnv passes NODE_OPTIONS to every process it starts). Each process appends
// to <LOOP_PROBE_DIR or $TMPDIR/modelgate-loop-probe>/p-<pid>.log: its start time and command,
// every event-loop block over LOOP_PROBE_BLOCK_MS (a 5 ms interval timer firing that late: its
// JavaScript ran, or the thread was not scheduled) with the process's CPU time and RSS then, and
// every mark-compact and every other GC pause over LOOP_PROBE_GC_MS. Times are seconds since
// the process started the probe. Appends are synchronous and only past the thresholds, so the
// probe itself costs a timer (and, with LOOP_PROBE_REQ_MS, a listener per request).
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
// The monotonic clock the load generator stamps x-bench-sent with (bench/load.ts monoMs), and its
// offset from performance.now() (both count from the same clock in one process).
const monoMs = () => Number(process.hrtime.bigint()) / 1e6;
const monoOffset = monoMs() - performance.now();
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};
// Why V8 collected (perf_hooks' gc flags). V8's memory reducer starts its GCs with
// all-external-memory (docs/performance.md, Session 29).
const flagNames = [
  [constants.NODE_PERFORMANCE_GC_FLAGS_FORCED, 'forced'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_SYNCHRONOUS_PHANTOM_PROCESSING, 'sync-phantom'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_AVAILABLE_GARBAGE, 'all-available-garbage'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY, 'all-external-memory'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_SCHEDULE_IDLE, 'schedule-idle'],
  [constants.NODE_PERFORMANCE_GC_FLAGS_CONSTRUCT_RETAINED, 'construct-retained'],
];
const gcFlags = (f) => {
  const names = flagNames.filter(([bit]) => f & bit).map(([, n]) => n);
  return names.length ? ` flags=${names.join(',')}` : '';
};
const who = [process.argv[1] ?? 'node', ...process.argv.slice(2)].join(' ').slice(0, 120);
appendFileSync(file, `start ${new Date(performance.timeOrigin + t0).toISOString()} ${who}\n`);
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if (e.duration > gcMs || e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      const heap = (process.memoryUsage().heapUsed / 1048576).toFixed(0);
      appendFileSync(
        file,
        `gc ${at(e.startTime)} ${kinds[e.detail?.kind] ?? e.detail?.kind} ${e.duration.toFixed(1)}ms heap=${heap}MB${gcFlags(e.detail?.flags)}\n`,
      );
    }
}).observe({ entryTypes: ['gc'] });
let last = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage();
  if (now - last > blockMs) {
    const rss = (process.memoryUsage.rss() / 1048576).toFixed(0);
    // ran_ms: the CPU the whole process (every thread) got during the gap; far under the gap's
    // length means the process was waiting or not scheduled, not running JavaScript.
    const ran = (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000;
    appendFileSync(
      file,
      `block ${at(last)} ${(now - last).toFixed(1)}ms ran_ms=${ran.toFixed(1)} cpu_ms=${((cpu.user + cpu.system) / 1000).toFixed(0)} rss=${rss}MB\n`,
    );
  }
  last = now;
  lastCpu = cpu;
}, 5).unref();

// With LOOP_PROBE_REQ_MS set (and the paced rounds run with BENCH_SLOW_DIR, which stamps each
// request with its send time in x-bench-sent), every HTTP server in the process logs the
// requests that arrived late or were handled slowly: `req <sent s> arrive=<ms from send to
// Node's 'request' event> handle=<ms from there to the response's 'finish'> sock=<new|reused>`.
// Arrival covers the kernel, the socket's queue and HTTP parsing; handling covers the route.
const reqMs = Number(process.env.LOOP_PROBE_REQ_MS ?? 0);
if (reqMs > 0) {
  const http = await import('node:http');
  const seen = new WeakSet();
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    const [req, res] = args;
    if (event === 'request') {
      const sent = Number(req.headers['x-bench-sent']);
      const sock = seen.has(req.socket) ? 'reused' : 'new';
      seen.add(req.socket);
      if (sent > 0) {
        const arrive = monoMs();
        res.once('finish', () => {
          const handle = monoMs() - arrive;
          if (arrive - sent > reqMs || handle > reqMs)
            appendFileSync(
              file,
              `req ${at(sent - monoOffset)} arrive=${(arrive - sent).toFixed(1)}ms handle=${handle.toFixed(1)}ms sock=${sock}\n`,
            );
        });
      }
    }
    return emit.call(this, event, ...args);
  };
}

// With LOOP_PROBE_MEM_S set, every that many seconds: `mem <t> heap=<used MB> external=<MB>
// array_buffers=<MB> rss=<MB>`, to set the heap's growth between major GCs beside them.
const memS = Number(process.env.LOOP_PROBE_MEM_S ?? 0);
if (memS > 0) {
  const mb = (b) => (b / 1048576).toFixed(1);
  setInterval(() => {
    const m = process.memoryUsage();
    appendFileSync(
      file,
      `mem ${at(performance.now())} heap=${mb(m.heapUsed)} external=${mb(m.external)} array_buffers=${mb(m.arrayBuffers)} rss=${mb(m.rss)}\n`,
    );
  }, memS * 1000).unref();
}

// With LOOP_PROBE_TRACE=1 (and the paced rounds run with BENCH_SLOW_DIR, so every request carries
// its send time in x-bench-sent and in its body's `user`), every HTTP server in the process
// records every such request's way through it, to place a slow request's time on one hop
// (bench/timeline.ts):
//   `trace <x-bench-sent> <arrive> <fwd_send> <fwd_headers> <fwd_end> <finish>`
// in ms of the system's monotonic clock (as the generator stamps them): arrival at
// Node's 'request' event, the upstream request's headers written (undici:client:sendHeaders),
// its response's headers and end read (undici:request:headers, :trailers), and the response's
// last bytes written (res.end()). The fwd_* fields are 0 in a process that forwards nothing (the fake upstream). Which
// incoming request an upstream request is for is read from the `user` its body passes on (both
// proxies forward it; no AsyncLocalStorage, whose promise hooks would slow the process down),
// and the upstream request gets x-bench-sent too (undici's request.addHeader on
// undici:request:create), so the upstream's own line joins the proxy's. Lines are buffered and
// appended once a second.
if (process.env.LOOP_PROBE_TRACE === '1') {
  const http = await import('node:http');
  const dc = await import('node:diagnostics_channel');
  const now = monoMs;
  /** Requests in flight through this process, by stamp; each upstream request's, by request. */
  const open = new Map();
  const byRequest = new WeakMap();
  let lines = [];
  const flush = () => {
    if (lines.length === 0) return;
    appendFileSync(file, lines.join(''));
    lines = [];
  };
  setInterval(flush, 1000).unref();
  process.on('exit', flush);
  // A process without a handler of its own (the fake upstream) dies on the bench's SIGTERM
  // without 'exit': flush first, then, if no one else listens, die of the signal as it would have.
  for (const sig of ['SIGTERM', 'SIGINT'])
    process.once(sig, () => {
      flush();
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    });
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') {
      const [req, res] = args;
      const sent = req.headers['x-bench-sent'];
      if (typeof sent === 'string') {
        const rec = { sent, arrive: now(), send: 0, headers: 0, end: 0, finish: 0 };
        open.set(sent, rec);
        // The response's end is when the route hands its last bytes to res.end(), which writes
        // them to the socket at once; 'finish' waits for the write's callback, a later turn of
        // the loop that can come after the client has read them.
        const end = res.end;
        res.end = function (...a) {
          if (!rec.finish) rec.finish = now();
          return end.apply(this, a);
        };
        res.once('close', () => {
          open.delete(sent);
          if (!rec.finish) return;
          const f = (v) => (v ? v.toFixed(3) : '0');
          lines.push(
            `trace ${sent} ${f(rec.arrive)} ${f(rec.send)} ${f(rec.headers)} ${f(rec.end)} ${f(rec.finish)}\n`,
          );
        });
      }
    }
    return emit.call(this, event, ...args);
  };
  const marker = Buffer.from('"user":"');
  dc.subscribe('undici:request:create', ({ request }) => {
    if (open.size === 0 || request.body == null) return;
    const body = typeof request.body === 'string' ? Buffer.from(request.body) : request.body;
    if (!Buffer.isBuffer(body)) return;
    const at = body.indexOf(marker);
    if (at < 0) return;
    const from = at + marker.length;
    const sent = body.toString('latin1', from, body.indexOf(34, from));
    const rec = open.get(sent);
    if (!rec || rec.send) return;
    byRequest.set(request, rec);
    request.addHeader('x-bench-sent', sent);
  });
  dc.subscribe('undici:client:sendHeaders', ({ request }) => {
    const rec = byRequest.get(request);
    if (rec) rec.send = now();
  });
  dc.subscribe('undici:request:headers', ({ request }) => {
    const rec = byRequest.get(request);
    if (rec) rec.headers = now();
  });
  dc.subscribe('undici:request:trailers', ({ request }) => {
    const rec = byRequest.get(request);
    if (rec) rec.end = now();
  });
}

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * How long each proxy's main thread waited for its core at a paced 1,000 req/s, and who had the
 * core meanwhile: the scheduler's own record (`perf record -e sched:sched_switch -e
 * sched:sched_wakeup` on the proxies' core, `perf script`). A wait starts when the thread is woken
 * (a request arrived, the upstream answered) or preempted, and ends when it runs again. Waits over
 * 0.5 ms are what the paced p99 is made of when neither a GC pause nor an event-loop block explains
 * a slow request (`bench/tail.ts`'s "neither"; docs/performance.md, session 34). The proxy's own
 * other threads (V8's GC and compiler workers, libuv's pool) are named `own thread <tid>`.
 * Needs `perf` with the sched tracepoints (root, or perf_event_paranoid <= 1).
 * Usage: node --import tsx bench/wakeups.ts [seconds=5] [--pg] [--no-build] [--env K=V] [-- <node flags for the gateway>]
 */

export interface Wait {
  /** How long the thread was runnable and not running (ms). */
  ms: number;
  /** Who ran on the core meanwhile: command name (or `own thread <tid>`) -> ms. */
  ran: Record<string, number>;
}

export const SWITCH =
  /^\s*\[\d+\]\s+([\d.]+):\s+sched:sched_switch:\s+prev_comm=(.*?) prev_pid=(\d+) .*?prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)/;
export const WAKEUP = /^\s*\[\d+\]\s+([\d.]+):\s+sched:sched_wakeup:\s+comm=.*? pid=(\d+) /;

/**
 * The waits of thread `tid` in `perf script -F cpu,time,event,trace` lines of one core's
 * sched_switch and sched_wakeup events. `own` are the tids of the thread's process.
 */
export function runnableWaits(lines: Iterable<string>, tid: number, own: ReadonlySet<number>): Wait[] {
  const waits: Wait[] = [];
  let since: number | undefined; // when the thread became runnable without running
  let running = false;
  let ran: Record<string, number> = {};
  let current: string | undefined; // who has the core, while the thread waits
  let currentSince = 0;
  const charge = (t: number) => {
    if (since !== undefined && current !== undefined)
      ran[current] = (ran[current] ?? 0) + (t - Math.max(currentSince, since)) * 1000;
  };
  for (const line of lines) {
    const s = SWITCH.exec(line);
    if (s) {
      const t = Number(s[1]);
      const prev = Number(s[3]);
      const next = Number(s[6]);
      charge(t);
      if (prev === tid) {
        running = false;
        // Preempted (still runnable): its wait starts now. Asleep (S, D): it waits for a wake-up.
        if (s[4]!.startsWith('R')) {
          since = t;
          ran = {};
        }
      }
      if (next === tid) {
        if (since !== undefined) waits.push({ ms: (t - since) * 1000, ran });
        since = undefined;
        running = true;
        current = undefined;
      } else {
        current = own.has(next) ? `own thread ${next}` : next === 0 ? '(idle)' : s[5]!;
        currentSince = t;
      }
      continue;
    }
    const w = WAKEUP.exec(line);
    if (w && Number(w[2]) === tid && !running && since === undefined) {
      since = Number(w[1]);
      ran = {};
    }
  }
  return waits;
}

/** Count of waits over `ms`, and who ran during them in total (ms), the most first. */
export function summarize(
  waits: readonly Wait[],
  overMs: number,
): { count: number; ran: Array<[string, number]> } {
  const ran: Record<string, number> = {};
  let count = 0;
  for (const w of waits) {
    if (w.ms <= overMs) continue;
    count++;
    for (const [who, ms] of Object.entries(w.ran)) ran[who] = (ran[who] ?? 0) + ms;
  }
  return { count, ran: Object.entries(ran).sort((a, b) => b[1] - a[1]) };
}

async function main(): Promise<void> {
  const { cannon, PacedGenerator } = await import('./load.js');
  const { buildAll, probeArgs } = await import('./procs.js');
  const { PROXY_CPUS, startStack } = await import('./stack.js');
  const { own: args, extra: gatewayFlags, gatewayEnv, seconds } = probeArgs(process.argv.slice(2), 5);
  const pg = args.includes('--pg');
  if (spawnSync('perf', ['--version']).status !== 0) {
    process.stderr.write('bench/wakeups.ts needs perf (Debian: linux-perf)\n');
    process.exit(2);
  }
  if (!args.includes('--no-build')) buildAll();
  const dir = mkdtempSync(join(tmpdir(), 'mg-wakeups-'));
  const s = await startStack({ built: true, pg, withBaseline: true, gatewayFlags, gatewayEnv });
  const gen = PacedGenerator.open();
  try {
    const targets = [s.target('baseline'), s.target('gateway')];
    for (const t of targets) await cannon(t, { stream: false, duration: 5, connections: 50 });
    await gen.interleaved(targets, 1000, 1, 2); // the generator's warm-up, not measured
    for (const [i, t] of targets.entries()) {
      const pid = i === 0 ? s.baseline!.pid : s.gateway.pid;
      const data = join(dir, `${t.name}.data`);
      const load = gen.interleaved([t], 1000, seconds + 4, 1);
      await new Promise((r) => setTimeout(r, 2000));
      const own = new Set(readdirSync(`/proc/${pid}/task`).map(Number));
      const perf = spawn(
        'perf',
        [
          'record',
          '-q',
          '-e',
          'sched:sched_switch',
          '-e',
          'sched:sched_wakeup',
          '-C',
          PROXY_CPUS,
          '-o',
          data,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
      await new Promise((r) => setTimeout(r, seconds * 1000));
      perf.kill('SIGINT');
      // perf record stops at SIGINT, writes its file and exits 0 (or by the signal itself).
      const code = await new Promise<number | null>((r) => perf.on('exit', (c) => r(c ?? 0)));
      const [res] = await load;
      const script = spawnSync('perf', ['script', '-i', data, '-F', 'cpu,time,event,trace'], {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
      });
      if (code !== 0 || script.status !== 0)
        throw new Error(`perf failed: ${script.stderr || `record exited ${code}`}`);
      own.delete(pid);
      const waits = runnableWaits(script.stdout.split('\n'), pid, own);
      const [half, one] = [summarize(waits, 0.5), summarize(waits, 1)];
      const top = [...waits].sort((a, b) => b.ms - a.ms).slice(0, 5);
      const fmt = (ran: Array<[string, number]>) => ran.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
      process.stdout.write(
        `${t.name} (pid ${pid}, paced p99 ${res!.p99.toFixed(2)} ms): ${waits.length} waits in ${seconds} s, ` +
          `over 0.5 ms ${half.count}, over 1 ms ${one.count}\n` +
          `  who ran during the waits over 0.5 ms (ms): ${fmt(half.ran) || '-'}\n` +
          top.map((w) => `  ${w.ms.toFixed(2)} ms: ${fmt(Object.entries(w.ran))}\n`).join(''),
      );
    }
  } finally {
    gen.close();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.split('?')[0] === pathToFileURL(process.argv[1]).href) await main();

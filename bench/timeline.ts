import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pct } from './load.js';
import { readRounds, type SlowRound } from './slow-slices.js';
import { SWITCH, WAKEUP } from './wakeups.js';

/**
 * Where a paced request's time went, hop by hop, for the direct upstream, the baseline and the
 * gateway: joins what the load generator recorded of each request (BENCH_SLOW_DIR with
 * BENCH_SLOW_MS=0: every request's send time and latency) with what each server recorded of it
 * (LOOP_PROBE_TRACE=1 in bench/loop-probe.mjs: arrival, the upstream request's send, the upstream
 * response's headers and end, and the response's res.end()), by the send time every request
 * carries (x-bench-sent, which the proxies pass on to the upstream). Every process reads the
 * system's monotonic clock (bench/load.ts monoMs), so a hop cannot read negative; one under
 * -`SKEW_MS` is counted as out of order all the same, as a check on the join.
 *
 * A proxied request's hops: `in` generator send -> proxy 'request' event (the kernel, the proxy's
 * loop waking, HTTP parsing); `route` -> the upstream request written (body, auth, validation);
 * `out` -> the upstream's 'request' event; `upstream` its handling; `back` its res.end() -> the
 * proxy reading the response's headers; `reply` -> the proxy's res.end(); `return` ->
 * the generator reading the end of it. A direct request has `in`, `upstream` and `return`.
 *
 * Usage (a latency-only run with every process probed, then this):
 *   LOOP_PROBE_DIR=/tmp/tl/probe LOOP_PROBE_TRACE=1 BENCH_SLOW_DIR=/tmp/tl/slow BENCH_SLOW_MS=0 \
 *     NODE_OPTIONS="--import ./bench/loop-probe.mjs" npm run bench -- --build --scenarios latency
 *   node --import tsx bench/timeline.ts /tmp/tl/probe /tmp/tl/slow [--slow-ms 1.5] [--list N] [--all-rounds]
 *     [--sched <perf script -F cpu,time,event,trace output of perf record -k mono -e sched:sched_switch
 *     -e sched:sched_wakeup -a, taken during the paced rounds>]
 */
export const HOPS = ['in', 'route', 'out', 'upstream', 'back', 'reply', 'return'] as const;
export type Hop = (typeof HOPS)[number];
/** How negative a hop may read (rounding to the µs) before it counts as out of order (ms). */
export const SKEW_MS = 0.002;

/** One server's record of one request (monotonic ms); the fwd_* are 0 where it forwarded nothing. */
export interface ServerTrace {
  arrive: number;
  send: number;
  headers: number;
  end: number;
  finish: number;
}

export interface Traces {
  upstream: Map<string, ServerTrace>;
  /** Per proxy ('baseline', 'gateway'): its records by x-bench-sent. */
  proxies: Map<string, Map<string, ServerTrace>>;
  /** Each process's pid (its main thread's tid), by kind, from the probe logs' names. */
  pids?: Record<string, number>;
}

/** Which process a probe log is, from its start line's command. */
export function processKind(
  startLine: string,
): 'upstream' | 'baseline' | 'gateway' | 'generator' | undefined {
  if (/paced-child/.test(startLine)) return 'generator';
  if (/fake-upstream/.test(startLine)) return 'upstream';
  if (/baseline-proxy/.test(startLine)) return 'baseline';
  if (/main\.(js|ts) serve/.test(startLine)) return 'gateway';
  return undefined;
}

/** The `trace` lines of one probe log, by their x-bench-sent stamp. */
export function parseTraces(text: string): Map<string, ServerTrace> {
  const out = new Map<string, ServerTrace>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('trace ')) continue;
    const [, sent, arrive, send, headers, end, finish] = line.split(' ');
    out.set(sent!, {
      arrive: Number(arrive),
      send: Number(send),
      headers: Number(headers),
      end: Number(end),
      finish: Number(finish),
    });
  }
  return out;
}

export function readTraces(probeDir: string): Traces {
  const t: Traces = { upstream: new Map(), proxies: new Map(), pids: {} };
  for (const f of readdirSync(probeDir)) {
    if (!f.endsWith('.log')) continue;
    const text = readFileSync(join(probeDir, f), 'utf8');
    const kind = processKind(text.slice(0, text.indexOf('\n')));
    if (!kind) continue;
    t.pids![kind] = Number(/^p-(\d+)\.log$/.exec(f)?.[1]);
    if (kind === 'generator') continue;
    const traces = parseTraces(text);
    const into = kind === 'upstream' ? t.upstream : (t.proxies.get(kind) ?? new Map<string, ServerTrace>());
    for (const [k, v] of traces) into.set(k, v);
    if (kind !== 'upstream') t.proxies.set(kind, into);
  }
  return t;
}

/**
 * One request's hops (ms), or undefined if a process did not record it. `sent` and `done` are
 * the generator's send time and the time it read the response's end.
 */
export function hops(
  sent: number,
  done: number,
  upstream: ServerTrace | undefined,
  proxy: ServerTrace | undefined,
  direct: boolean,
): Partial<Record<Hop, number>> | undefined {
  if (!upstream) return undefined;
  if (direct)
    return {
      in: upstream.arrive - sent,
      upstream: upstream.finish - upstream.arrive,
      return: done - upstream.finish,
    };
  if (!proxy?.send || !proxy.headers) return undefined;
  return {
    in: proxy.arrive - sent,
    route: proxy.send - proxy.arrive,
    out: upstream.arrive - proxy.send,
    upstream: upstream.finish - upstream.arrive,
    back: proxy.headers - upstream.finish,
    reply: proxy.finish - proxy.headers,
    return: done - proxy.finish,
  };
}

export interface TargetReport {
  target: string;
  joined: number;
  missing: number;
  outOfOrder: number;
  /** Every joined request's hops: p50 and p99 of each. */
  all: Record<string, { p50: number; p99: number }>;
  slow: number;
  /** Of the slow requests: how many had each hop as their longest, and each hop's mean excess over its median. */
  longest: Record<string, number>;
  excess: Record<string, number>;
  /** Slow requests by how many of their hops each took over `LATE_MS` more than its median. */
  lateHops: number[];
  /** Slow requests sent within `PAIR_MS` of the target's previous send (the generator catching up). */
  paired: number;
  /**
   * Per hop between two processes: how many slow requests had it late, and in how many of those
   * the receiving process (the proxy for `in` and `back`, the upstream for `out`, the generator
   * for `return`) recorded nothing, in one stretch, for `QUIET_SHARE` of the time the message
   * waited for it: it was not running, or not woken, rather than busy with other requests.
   */
  late: Record<string, number>;
  silent: Record<string, number>;
  /** With the scheduler's record: per hop, what the receiver's main thread did through its silent late hops (ms, summed). */
  silentStates?: Record<string, Record<ThreadState | 'unknown', number>>;
  /** The slowest requests, slowest first: the generator's send time, latency and hops. */
  slowest: Array<{ sent: number; ms: number; hops: Partial<Record<Hop, number>> }>;
}

/** A hop this much over its median counts as late (ms). */
export const LATE_MS = 0.5;
/** Two sends this close were made back to back (ms). */
export const PAIR_MS = 0.3;

export type ThreadState = 'running' | 'runnable' | 'asleep';
/** A stretch of time (monotonic ms) one thread spent in one state. */
export interface Span {
  from: number;
  to: number;
  state: ThreadState;
}

/**
 * What each of `tids` was doing over time, from `perf script -F cpu,time,event,trace` lines of
 * `perf record -k mono -e sched:sched_switch -e sched:sched_wakeup -a` (the monotonic clock, as
 * the traces): running from a switch to it; runnable from a wake-up, or from a switch away while
 * still runnable (preempted); asleep from a switch away otherwise. Before a thread's first event
 * its state is unknown and no span is made.
 */
export function threadStates(lines: Iterable<string>, tids: ReadonlySet<number>): Map<number, Span[]> {
  const spans = new Map<number, Span[]>([...tids].map((t) => [t, []]));
  const now = new Map<number, { state: ThreadState; since: number }>();
  const enter = (tid: number, state: ThreadState, t: number) => {
    const cur = now.get(tid);
    if (cur && t > cur.since) spans.get(tid)!.push({ from: cur.since, to: t, state: cur.state });
    now.set(tid, { state, since: t });
  };
  for (const line of lines) {
    const sw = SWITCH.exec(line);
    if (sw) {
      const t = Number(sw[1]) * 1000;
      const prev = Number(sw[3]);
      const next = Number(sw[6]);
      if (tids.has(prev)) enter(prev, sw[4]!.startsWith('R') ? 'runnable' : 'asleep', t);
      if (tids.has(next)) enter(next, 'running', t);
      continue;
    }
    const w = WAKEUP.exec(line);
    if (w) {
      const tid = Number(w[2]);
      if (tids.has(tid) && now.get(tid)?.state !== 'running' && now.get(tid)?.state !== 'runnable')
        enter(tid, 'runnable', Number(w[1]) * 1000);
    }
  }
  return spans;
}

/** The index of the first of the `sorted` items whose `key` is over `x` (their length if none is). */
function firstAfter<T>(sorted: readonly T[], key: (item: T) => number, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(sorted[mid]!) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How long (ms) the spans spent in each state between `from` and `to`; `unknown` where none covers. */
export function stateTimes(spans: Span[], from: number, to: number): Record<ThreadState | 'unknown', number> {
  const out = { running: 0, runnable: 0, asleep: 0, unknown: 0 };
  let covered = 0;
  const lo = firstAfter(spans, (x) => x.to, from);
  for (let i = lo; i < spans.length && spans[i]!.from < to; i++) {
    const ms = Math.min(to, spans[i]!.to) - Math.max(from, spans[i]!.from);
    if (ms > 0) {
      out[spans[i]!.state] += ms;
      covered += ms;
    }
  }
  out.unknown = Math.max(0, to - from - covered);
  return out;
}

/** Which process receives each hop's message, for a proxied and for a direct request. */
const RECEIVER: Record<'proxied' | 'direct', Partial<Record<Hop, 'proxy' | 'upstream' | 'generator'>>> = {
  proxied: { in: 'proxy', out: 'upstream', back: 'proxy', return: 'generator' },
  direct: { in: 'upstream', return: 'generator' },
};
/** A receiver's events this close to a hop's ends are its own message's, not other work (ms). */
const EDGE_MS = 0.05;
/** A receiver quiet for this share of a late hop in one stretch counts as silent through it. */
export const QUIET_SHARE = 0.8;

/**
 * The longest stretch between `from` and `to` in which none of the sorted `times` falls (ms):
 * `to - from` if none does.
 */
export function longestQuiet(times: number[], from: number, to: number): number {
  let last = from;
  let longest = 0;
  for (let i = firstAfter(times, (t) => t, from); i < times.length && times[i]! < to; i++) {
    longest = Math.max(longest, times[i]! - last);
    last = times[i]!;
  }
  return Math.max(longest, to - last);
}

/** Every moment a process of the run was seen doing something, sorted. */
function activity(traces: Traces, rounds: SlowRound[]) {
  const of = (m: Map<string, ServerTrace>) => {
    const t: number[] = [];
    for (const r of m.values())
      for (const v of [r.arrive, r.send, r.headers, r.end, r.finish]) if (v) t.push(v);
    return t.sort((a, b) => a - b);
  };
  const generator: number[] = [];
  for (const r of rounds) for (const [, sent, ms, , done] of r.slow) generator.push(sent, done ?? sent + ms);
  generator.sort((a, b) => a - b);
  const proxies = new Map([...traces.proxies].map(([k, m]) => [k, of(m)]));
  return { upstream: of(traces.upstream), generator, proxies };
}

export function report(
  traces: Traces,
  rounds: SlowRound[],
  slowMs: number,
  list = 0,
  sched?: Map<number, Span[]>,
): TargetReport[] {
  const seen = activity(traces, rounds);
  const rows = new Map<
    string,
    {
      all: Array<Partial<Record<Hop, number>>>;
      total: number[];
      sent: number[];
      gap: number[];
      missing: number;
      bad: number;
      last: number;
    }
  >();
  // In the order they were sent (the file has them in the order their answers ended).
  for (const r of rounds)
    for (const [k, sent, ms, , doneMs] of [...r.slow].sort((a, b) => a[1] - b[1])) {
      const target = r.targets[k]!;
      const key = sent.toFixed(3);
      const row = rows.get(target) ?? { all: [], total: [], sent: [], gap: [], missing: 0, bad: 0, last: 0 };
      rows.set(target, row);
      const gap = sent - row.last;
      row.last = sent;
      const direct = target === 'upstream';
      const h = hops(
        sent,
        doneMs ?? sent + ms,
        traces.upstream.get(key),
        traces.proxies.get(target)?.get(key),
        direct,
      );
      if (!h) {
        row.missing++;
        continue;
      }
      if (Object.values(h).some((v) => v < -SKEW_MS)) row.bad++;
      row.all.push(h);
      row.total.push(ms);
      row.sent.push(sent);
      row.gap.push(gap);
    }
  const out: TargetReport[] = [];
  for (const [target, row] of rows) {
    const names = HOPS.filter((n) => row.all[0]?.[n] !== undefined);
    const all: TargetReport['all'] = {};
    const median: Record<string, number> = {};
    for (const n of names) {
      const v = row.all.map((h) => h[n]!).sort((a, b) => a - b);
      all[n] = { p50: pct(v, 0.5), p99: pct(v, 0.99) };
      median[n] = all[n].p50;
    }
    const longest: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    const excess: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    let slow = 0;
    let paired = 0;
    const lateHops = names.map(() => 0).concat(0);
    const slowOnes: number[] = [];
    const receivers = RECEIVER[target === 'upstream' ? 'direct' : 'proxied'];
    const events = {
      upstream: seen.upstream,
      generator: seen.generator,
      proxy: seen.proxies.get(target) ?? [],
    };
    const lateBy: Record<string, number> = {};
    const silent: Record<string, number> = {};
    const silentStates: Record<string, Record<ThreadState | 'unknown', number>> = {};
    for (const n of names)
      if (receivers[n]) {
        lateBy[n] = 0;
        silent[n] = 0;
        silentStates[n] = { running: 0, runnable: 0, asleep: 0, unknown: 0 };
      }
    const tidOf = {
      upstream: traces.pids?.upstream,
      generator: traces.pids?.generator,
      proxy: traces.pids?.[target],
    };
    for (const [i, h] of row.all.entries()) {
      if (row.total[i]! <= slowMs) continue;
      slow++;
      slowOnes.push(i);
      if (row.gap[i]! < PAIR_MS) paired++;
      let best = names[0]!;
      let late = 0;
      let at = row.sent[i]!; // each hop starts where the one before ended
      for (const n of names) {
        excess[n]! += h[n]! - median[n]!;
        const receiver = receivers[n];
        if (h[n]! - median[n]! > LATE_MS) {
          late++;
          if (receiver) {
            lateBy[n]!++;
            const quiet = longestQuiet(events[receiver], at + EDGE_MS, at + h[n]! - EDGE_MS);
            if (quiet >= QUIET_SHARE * (h[n]! - 2 * EDGE_MS)) {
              silent[n]!++;
              const spans = sched?.get(tidOf[receiver] ?? -1);
              if (spans) {
                const st = stateTimes(spans, at + EDGE_MS, at + h[n]! - EDGE_MS);
                for (const k of Object.keys(st) as Array<keyof typeof st>) silentStates[n]![k] += st[k];
              }
            }
          }
        }
        at += h[n]!;
        if (h[n]! > h[best]!) best = n;
      }
      lateHops[late]!++;
      longest[best]!++;
    }
    const slowest = slowOnes
      .sort((a, b) => row.total[b]! - row.total[a]!)
      .slice(0, list)
      .map((i) => ({ sent: row.sent[i]!, ms: row.total[i]!, hops: row.all[i]! }));
    for (const n of names) excess[n] = slow ? excess[n]! / slow : 0;
    out.push({
      target,
      joined: row.all.length,
      missing: row.missing,
      outOfOrder: row.bad,
      all,
      slow,
      longest,
      excess,
      lateHops,
      paired,
      late: lateBy,
      silent,
      ...(sched ? { silentStates } : {}),
      slowest,
    });
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [probeDir, slowDir] = process.argv.slice(2);
  if (!probeDir || !slowDir)
    throw new Error('usage: bench/timeline.ts <probe dir> <slow dir> [--slow-ms 1.5]');
  const si = process.argv.indexOf('--slow-ms');
  const slowMs = si > 0 ? Number(process.argv[si + 1]) : 1.5;
  const ki = process.argv.indexOf('--sched');
  const li = process.argv.indexOf('--list');
  const list = li > 0 ? Number(process.argv[li + 1]) : 0;
  // The first round is the warm-up's (run.ts's --paced-warmup), unless asked for.
  const all = readRounds(slowDir).map((r) => r.round);
  const rounds = process.argv.includes('--all-rounds') ? all : all.slice(1);
  const fmt = (v: number) => v.toFixed(3);
  const traces = readTraces(probeDir);
  const sched =
    ki > 0
      ? threadStates(
          readFileSync(process.argv[ki + 1]!, 'utf8').split('\n'),
          new Set(Object.values(traces.pids ?? {})),
        )
      : undefined;
  for (const r of report(traces, rounds, slowMs, list, sched)) {
    process.stdout.write(
      `\n${r.target}: ${r.joined} requests joined (${r.missing} not recorded by a server, ${r.outOfOrder} with a hop under -${SKEW_MS} ms), ${r.slow} over ${slowMs} ms\n`,
    );
    for (const [n, v] of Object.entries(r.all))
      process.stdout.write(
        `  ${n.padEnd(8)} p50 ${fmt(v.p50)} p99 ${fmt(v.p99)} ms | slow: longest in ${String(r.longest[n]).padStart(4)}, mean excess ${fmt(r.excess[n]!)} ms\n`,
      );
    process.stdout.write(
      `  late hops between processes, and how many of those the receiver was silent through (one quiet stretch of ${QUIET_SHARE * 100}% of it): ${Object.keys(
        r.late,
      )
        .map((n) => `${n} ${r.late[n]}/${r.silent[n]}`)
        .join(', ')}\n`,
    );
    for (const [n, st] of Object.entries(r.silentStates ?? {})) {
      // Shares of the time the scheduler's record covered; `unknown` is outside it.
      const known = st.running + st.runnable + st.asleep;
      if (known > 0)
        process.stdout.write(
          `    silent ${n}: the receiver's main thread ${(['running', 'runnable', 'asleep'] as const)
            .map((k) => `${k} ${((100 * st[k]) / known).toFixed(0)}%`)
            .join(
              ', ',
            )} of ${known.toFixed(1)} ms recorded (${st.unknown.toFixed(1)} ms outside the record)\n`,
        );
    }
    process.stdout.write(
      `  slow requests by how many hops were over ${LATE_MS} ms late: ${r.lateHops.map((c, i) => `${i}: ${c}`).join(', ')}; sent within ${PAIR_MS} ms of the one before: ${r.paired}\n`,
    );
    for (const s of r.slowest)
      process.stdout.write(
        `    ${s.sent.toFixed(3)} ${fmt(s.ms)} ms: ${Object.entries(s.hops)
          .map(([n, v]) => `${n} ${fmt(v)}`)
          .join(', ')}\n`,
      );
  }
}

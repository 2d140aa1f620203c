import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  cannon,
  interleaved,
  type LoadResult,
  median,
  openStreams,
  PacedGenerator,
  paced,
  type Target,
  ttfb,
} from './load.js';
import {
  buildAll,
  canPin,
  coreTimes,
  cpuSeconds,
  cpuSecondsByName,
  ROOT,
  rssMb,
  stealPct,
  stealText,
} from './procs.js';
import { profile } from './profile.js';
import { soak } from './soak.js';
import { DB_SERVERS, LOAD_CPUS, PROXY_CPUS, type Stack, startStack } from './stack.js';

/**
 * `npm run bench [-- options]`. Options (argv, or env BENCH_<NAME>):
 *   --quick                 short runs, finishes in about a minute
 *   --duration <s>          seconds per load run (default 10, quick 3)
 *   --rounds <n>            saturation runs per proxy, alternating; the best counts (5, quick 2)
 *   --connections <n>       connections at saturation (default 50)
 *   --warmup <s>            seconds of saturation load each proxy gets before anything is
 *                           measured (default 12, quick 2): the gateway's JIT takes ~10 s of
 *                           it to settle (docs/performance.md, session 26)
 *   --rate <n>              fixed rate for the latency scenario (default 1000 req/s)
 *   --paced-warmup <s>      seconds of paced load each target gets, interleaved, before the
 *                           paced rounds (default 10, quick 1): the switch from the load
 *                           generator's client to the paced one deoptimizes code in both
 *                           proxies, and at 1,000 req/s V8 takes ~5 s of the gateway's own load
 *                           to optimize it again (docs/performance.md, session 37)
 *   --streams <n>           concurrent open streams for the memory scenario (default 1000)
 *   --scenarios <list>      comma list of: throughput,latency,streaming,memory (default all)
 *   --pg                    also run everything against PostgreSQL + Redis
 *   --build                 compile src/ and the bench servers first and run plain JS (as in
 *                           production); without it: dist/ if present, else tsx
 *   --soak <minutes>        memory-growth soak instead of the scenarios
 *   --profile <seconds>     CPU-profile the gateway under load and print the top functions
 *                           (--scenarios throughput or streaming profiles only that kind,
 *                           --scenarios latency the paced rate;
 *                           --profile-baseline profiles the baseline proxy the same way)
 */
export interface Options {
  quick: boolean;
  duration: number;
  rounds: number;
  /** Seconds of non-streaming saturation load per proxy before the scenarios (--warmup). */
  warmup: number;
  /** Seconds of the lighter warm-up: streams before the scenarios. */
  warmupShort: number;
  /** Seconds of paced load per target before the paced rounds (--paced-warmup). */
  pacedWarmup: number;
  connections: number;
  rate: number;
  streams: number;
  ttfbCount: number;
  scenarios: Set<string>;
  pg: boolean;
  build: boolean;
  soak: number;
  profile: number;
  profileBaseline: boolean;
}

function parseOptions(argv: string[]): Options {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) return argv[i + 1] && !argv[i + 1]!.startsWith('--') ? argv[i + 1] : 'true';
    const eq = argv.find((a) => a.startsWith(`--${name}=`));
    if (eq) return eq.slice(name.length + 3);
    return process.env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`];
  };
  const flag = (name: string) => ['true', '1', 'yes'].includes(get(name) ?? '');
  const num = (name: string, dflt: number) => {
    const v = get(name);
    const n = v === undefined ? dflt : Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number`);
    return n;
  };
  const quick = flag('quick');
  return {
    quick,
    duration: num('duration', quick ? 3 : 10),
    rounds: num('rounds', quick ? 2 : 5),
    warmup: num('warmup', quick ? 2 : 12),
    warmupShort: quick ? 1 : 3,
    pacedWarmup: num('paced-warmup', quick ? 1 : 10),
    connections: num('connections', 50),
    rate: num('rate', 1000),
    streams: num('streams', 1000),
    ttfbCount: quick ? 200 : 1000,
    scenarios: new Set((get('scenarios') ?? 'throughput,latency,streaming,memory').split(',')),
    pg: flag('pg'),
    build: flag('build'),
    soak: num('soak', 0),
    profile: num('profile', 0),
    profileBaseline: flag('profile-baseline'),
  };
}

interface Figure {
  unit: string;
  baseline: number;
  gateway: number;
  /** gateway / baseline */
  ratio: number;
  /** Extra context: the direct-to-upstream value, or the gateway minus the upstream. */
  [extra: string]: number | string;
}

const fig = (
  unit: string,
  baseline: number,
  gateway: number,
  extra: Record<string, number | string> = {},
): Figure => ({
  unit,
  baseline: round(baseline),
  gateway: round(gateway),
  ratio: round(gateway / baseline, 3),
  ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v])),
});
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;
/**
 * From the gateway's /metrics: `modelgate_quota_lease_waits_total`, and prom-client's count and
 * seconds of major (mark-compact) GCs (NaN for what it does not have).
 */
async function gatewayCounters(base: string): Promise<{ waits: number; majors: number; majorS: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (re: RegExp) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : Number.NaN;
  };
  return {
    waits: read(/^modelgate_quota_lease_waits_total (\S+)$/m),
    majors: read(/^nodejs_gc_duration_seconds_count\{kind="major"\} (\S+)$/m),
    majorS: read(/^nodejs_gc_duration_seconds_sum\{kind="major"\} (\S+)$/m),
  };
}

function targets(s: Stack): { upstream: Target; baseline: Target; gateway: Target } {
  return {
    upstream: { name: 'upstream', url: `${s.upstream.url}`, headers: {} },
    baseline: { name: 'baseline', url: s.baseline!.url, headers: {}, pid: s.baseline!.pid },
    gateway: {
      name: 'gateway',
      url: s.gateway.url,
      headers: { authorization: `Bearer ${s.apiKey}` },
      pid: s.gateway.pid,
    },
  };
}

async function runScenarios(o: Options, pg: boolean): Promise<Record<string, unknown>> {
  const stack = await startStack({ pg, built: o.build });
  const t = targets(stack);
  const figures: Record<string, Figure> = {};
  const notes: string[] = [];
  const log = (m: string) => process.stderr.write(`  [${stack.database}] ${m}\n`);
  try {
    const pair = [t.baseline, t.gateway] as const;
    // Idle memory: after start and one sign-in/key creation, before any proxied request.
    await sleep(500);
    figures.rss_idle_mb = fig('MB', rssMb(stack.baseline!.pid), rssMb(stack.gateway.pid));
    log(`idle RSS ${figures.rss_idle_mb.baseline} / ${figures.rss_idle_mb.gateway} MB`);

    // Warm-up at saturation: the gateway's optimizing compiler keeps working for ~10 s of it
    // (session 26: ~460 functions optimized in the first 10 s, under 10 per 5 s after), and a
    // round measured before that reads its CPU per request 20-30% high. The baseline, a few
    // functions, is warm within a second; it gets the same load anyway.
    for (const target of pair) {
      await cannon(target, { stream: false, duration: o.warmup, connections: o.connections });
      await cannon(target, { stream: true, duration: o.warmupShort, connections: 10 });
    }

    if (o.scenarios.has('throughput')) {
      const [b, g] = await bestOf(stack.upstream.pid, o.rounds, pair, (target) =>
        cannon(target, { stream: false, duration: o.duration, connections: o.connections }),
      );
      figures.rps_nonstream = fig('req/s', b.best, g.best, {
        runs_baseline: b.runs,
        runs_gateway: g.runs,
        ...roundRatios(b.rps, g.rps),
        cpu_proxy_upstream_load_baseline: b.cpu,
        cpu_proxy_upstream_load_gateway: g.cpu,
      });
      // CPU per request does not depend on who saturates first (proxy or load generator).
      figures.cpu_ms_per_req_nonstream = fig(
        'ms',
        b.cpuMsPerRequest,
        g.cpuMsPerRequest,
        pg ? { db_servers_ms_per_req_gateway: round(g.dbCpuMsPerRequest, 4) } : {},
      );
      log(`non-streaming ${b.runs} / ${g.runs} req/s`);
      checkErrors([...b.all, ...g.all], 'non-streaming', notes);
    }

    if (o.scenarios.has('latency')) {
      const run = (target: Target) =>
        cannon(target, { stream: false, duration: o.duration, connections: 20, overallRate: o.rate });
      const up = await run(t.upstream);
      const b = await run(t.baseline);
      const g = await run(t.gateway);
      // "Added" is relative to calling the upstream directly at the same rate.
      figures.latency_p50_ms = fig('ms', b.p50, g.p50, {
        upstream: up.p50,
        added_gateway: g.p50 - up.p50,
        added_baseline: b.p50 - up.p50,
      });
      figures.latency_p99_ms = fig('ms', b.p99, g.p99, {
        upstream: up.p99,
        added_gateway: g.p99 - up.p99,
        added_baseline: b.p99 - up.p99,
      });
      figures.latency_achieved_rps = fig('req/s', b.rps, g.rps, { upstream: up.rps });
      log(
        `@${o.rate}/s p50 ${up.p50.toFixed(2)}/${b.p50.toFixed(2)}/${g.p50.toFixed(2)} p99 ${up.p99.toFixed(2)}/${b.p99.toFixed(2)}/${g.p99.toFixed(2)} ms (upstream/baseline/gateway)`,
      );
      checkErrors([up, b, g], 'fixed-rate', notes);
    }

    if (o.scenarios.has('latency')) {
      // The same rate, paced evenly (see paced() in load.ts): the figure the target is about.
      // `rounds` rounds; in each, the three targets take turns in 1 s slices (upstream,
      // baseline, gateway, upstream, ...; `interleaved()`), `duration` slices each, so a stall of
      // the machine lasting seconds lands on all three alike instead of on one target's round
      // (session 17: in sequential 10 s rounds the direct upstream's own p99 read 1.0-1.4 ms,
      // interleaved 0.3-0.5 on the same machine minutes later). Each figure is the median over
      // the rounds, every round recorded.
      const rounds: Array<Record<'up' | 'b' | 'g', LoadResult>> = [];
      // Each proxy's CPU per request at this rate: its core's utilization, which the queueing
      // behind the p99 depends on (at a low rate a request costs several times its CPU at
      // saturation: every request wakes the process from idle). Counted over the whole round,
      // so the slices it idles through (timers only) are in it too.
      const pacedCpu: Record<'b' | 'g', number[]> = { b: [], g: [] };
      // The hypervisor's steal on the proxies' core and the generator's, per round: a round with
      // a few percent stolen measured the host (session 35: 3.8-4.3% on a slow AMD host).
      const steal: string[] = [];
      const order = [t.upstream, t.baseline, t.gateway];
      const slices = Math.max(1, Math.round(o.duration));
      // One generator process for the warm-up round and every measured round (PacedGenerator);
      // BENCH_FRESH_GENERATOR=1 starts one per round and warms each target alone, as sessions
      // 13-31 measured.
      const fresh = process.env.BENCH_FRESH_GENERATOR === '1';
      const gen = fresh ? undefined : PacedGenerator.open();
      let pacedRequests = 0;
      let counters0 = { waits: 0, majors: 0, majorS: 0 };
      try {
        if (gen) await gen.interleaved(order, o.rate, 1, Math.max(1, Math.round(o.pacedWarmup)));
        else for (const target of order) await paced(target, o.rate, o.pacedWarmup);
        counters0 = await gatewayCounters(stack.gateway.url);
        for (let i = 0; i < o.rounds; i++) {
          const c0 = [cpuSeconds(t.baseline.pid!), cpuSeconds(t.gateway.pid!)] as const;
          const s0 = [coreTimes(PROXY_CPUS), coreTimes(LOAD_CPUS)];
          const [up, b, g] = (await (gen
            ? gen.interleaved(order, o.rate, 1, slices)
            : interleaved(order, o.rate, 1, slices))) as [LoadResult, LoadResult, LoadResult];
          const perReq = (pid: number, before: number, r: LoadResult) =>
            ((cpuSeconds(pid) - before) * 1000) / Math.max(1, r.ok + r.non2xx);
          pacedCpu.b.push(perReq(t.baseline.pid!, c0[0], b));
          pacedCpu.g.push(perReq(t.gateway.pid!, c0[1], g));
          const s1 = [coreTimes(PROXY_CPUS), coreTimes(LOAD_CPUS)];
          steal.push([0, 1].map((k) => stealText(stealPct(s0[k], s1[k]))).join('/'));
          pacedRequests += g.ok + g.non2xx;
          rounds.push({ up, b, g });
        }
      } finally {
        gen?.close();
      }
      // Requests that waited for a quota lease from the database (session 30: on PostgreSQL,
      // a few after every request-log write, each the length of a commit).
      const counters1 = await gatewayCounters(stack.gateway.url);
      const per1k = (k: 'waits' | 'majors' | 'majorS') =>
        ((counters1[k] - counters0[k]) * 1000) / Math.max(1, pacedRequests);
      const waitsPer1k = per1k('waits');
      // Major GCs stop the process for tens of milliseconds with the gateway's heap: a change
      // that makes per-request objects outlive the young generation shows here first (session
      // 47: a WeakMap entry per request took the paced p99 from 2.6 to 50 ms).
      const majorsPer10k = per1k('majors') * 10;
      const majorMsPer10k = per1k('majorS') * 10 * 1000;
      const med = (k: 'up' | 'b' | 'g', q: 'p50' | 'p99') => median(rounds.map((r) => r[k][q]));
      const each = (k: 'up' | 'b' | 'g', q: 'p50' | 'p99') => rounds.map((r) => round(r[k][q], 2)).join(',');
      const up = { p50: med('up', 'p50'), p99: med('up', 'p99') };
      const b = { p50: med('b', 'p50'), p99: med('b', 'p99') };
      const g = { p50: med('g', 'p50'), p99: med('g', 'p99') };
      figures.paced_p50_ms = fig('ms', b.p50, g.p50, {
        upstream: up.p50,
        added_gateway: g.p50 - up.p50,
        added_baseline: b.p50 - up.p50,
      });
      figures.paced_p99_ms = fig('ms', b.p99, g.p99, {
        upstream: up.p99,
        added_gateway: g.p99 - up.p99,
        added_baseline: b.p99 - up.p99,
        // What the gateway's own logic adds over a bare proxy on the same stack.
        gateway_over_baseline: g.p99 - b.p99,
        rounds_upstream: each('up', 'p99'),
        rounds_baseline: each('b', 'p99'),
        rounds_gateway: each('g', 'p99'),
        // The generator's worst send lateness per round: a large one marks a round the client spoiled.
        rounds_lag_max_ms: rounds
          .map((r) => [r.up, r.b, r.g].map((x) => round(x.lagMaxMs ?? 0, 1)).join('/'))
          .join(','),
        // Sends made back to back with the one before (the generator catching up): the share of
        // each target's load that did not arrive at a steady 1/rate.
        rounds_burst_pct: rounds
          .map((r) => [r.up, r.b, r.g].map((x) => round(x.burstPct ?? 0, 1)).join('/'))
          .join(','),
        quota_lease_waits_per_1k_gateway: round(waitsPer1k, 3),
        major_gcs_per_10k_gateway: round(majorsPer10k, 2),
        major_gc_ms_per_10k_gateway: round(majorMsPer10k, 1),
        rounds_steal_pct_proxy_load: steal.join(','),
      });
      figures.paced_cpu_ms_per_req = fig('ms', median(pacedCpu.b), median(pacedCpu.g), {
        rounds_baseline: pacedCpu.b.map((x) => round(x, 3)).join(','),
        rounds_gateway: pacedCpu.g.map((x) => round(x, 3)).join(','),
      });
      log(
        `paced @${o.rate}/s (median of ${o.rounds} rounds) p50 ${up.p50.toFixed(2)}/${b.p50.toFixed(2)}/${g.p50.toFixed(2)} p99 ${up.p99.toFixed(2)}/${b.p99.toFixed(2)}/${g.p99.toFixed(2)} ms; p99 rounds ${each('up', 'p99')} / ${each('b', 'p99')} / ${each('g', 'p99')}; gateway quota lease waits ${round(waitsPer1k, 2)} per 1,000 requests, major GCs ${round(majorsPer10k, 2)} (${round(majorMsPer10k, 1)} ms) per 10,000; steal % (proxies' core/generator's) ${steal.join(',')}`,
      );
      checkErrors(
        rounds.flatMap((r) => [r.up, r.b, r.g]),
        'paced',
        notes,
      );
    }

    if (o.scenarios.has('streaming')) {
      const [sb, sg] = await bestOf(stack.upstream.pid, o.rounds, pair, (target) =>
        cannon(target, { stream: true, duration: o.duration, connections: o.connections }),
      );
      figures.rps_stream = fig('req/s', sb.best, sg.best, {
        runs_baseline: sb.runs,
        runs_gateway: sg.runs,
        ...roundRatios(sb.rps, sg.rps),
        cpu_proxy_upstream_load_baseline: sb.cpu,
        cpu_proxy_upstream_load_gateway: sg.cpu,
      });
      checkErrors([...sb.all, ...sg.all], 'streaming', notes);
      figures.cpu_ms_per_req_stream = fig(
        'ms',
        sb.cpuMsPerRequest,
        sg.cpuMsPerRequest,
        pg ? { db_servers_ms_per_req_gateway: round(sg.dbCpuMsPerRequest, 4) } : {},
      );
      const up = await ttfb(t.upstream, o.ttfbCount);
      const b = await ttfb(t.baseline, o.ttfbCount);
      const g = await ttfb(t.gateway, o.ttfbCount);
      figures.stream_ttfb_p50_ms = fig('ms', b.p50, g.p50, {
        upstream: up.p50,
        added_gateway: g.p50 - up.p50,
        added_baseline: b.p50 - up.p50,
      });
      figures.stream_ttfb_p99_ms = fig('ms', b.p99, g.p99, {
        upstream: up.p99,
        added_gateway: g.p99 - up.p99,
        added_baseline: b.p99 - up.p99,
      });
      log(
        `streaming ${sb.runs} / ${sg.runs} req/s; TTFB p50 ${up.p50.toFixed(2)}/${b.p50.toFixed(2)}/${g.p50.toFixed(2)} ms`,
      );
    }

    if (o.scenarios.has('memory')) {
      // One chunk a second: a stream stays open ~20 s, far longer than the measurement.
      await stack.setSlow(1000);
      const rss: number[] = [];
      const opened: number[] = [];
      for (const [target, pid] of [
        [t.baseline, stack.baseline!.pid],
        [t.gateway, stack.gateway.pid],
      ] as const) {
        const s = await openStreams(target, o.streams, 30_000);
        let max = 0;
        for (let i = 0; i < 5; i++) {
          max = Math.max(max, rssMb(pid));
          await sleep(200);
        }
        rss.push(max);
        opened.push(s.opened);
        s.close();
        await sleep(1000);
      }
      await stack.setSlow(0);
      figures.rss_open_streams_mb = fig('MB', rss[0]!, rss[1]!, {
        streams_baseline: opened[0]!,
        streams_gateway: opened[1]!,
      });
      if (opened.some((n) => n < o.streams))
        notes.push(`only ${opened.join('/')} of ${o.streams} streams opened`);
      log(`RSS with ${opened.join('/')} open streams ${rss[0]!.toFixed(0)} / ${rss[1]!.toFixed(0)} MB`);
      await sleep(1000);
    }
    figures.rss_after_mb = fig('MB', rssMb(stack.baseline!.pid), rssMb(stack.gateway.pid));
    return { database: stack.database, gateway_entry: stack.gatewayKind, figures, notes };
  } finally {
    await stack.close();
  }
}

/**
 * Runs baseline and gateway alternately `rounds` times and keeps each one's best run: on a
 * shared machine, other work only ever lowers a figure, so the best run is the closest to the
 * process's own capacity. Every run is kept in the results to show the noise.
 */
async function bestOf(
  upstreamPid: number,
  rounds: number,
  pair: readonly [Target, Target],
  run: (t: Target) => Promise<LoadResult>,
): Promise<
  Array<{
    best: number;
    runs: string;
    rps: number[];
    cpu: string;
    cpuMsPerRequest: number;
    dbCpuMsPerRequest: number;
    all: LoadResult[];
  }>
> {
  const all: Array<Array<LoadResult & { cpu: number; upstreamCpu: number; loadCpu: number; dbCpu: number }>> =
    [[], []];
  for (let i = 0; i < rounds; i++)
    for (const k of [0, 1] as const) {
      const pid = pair[k].pid!;
      const c0 = cpuSeconds(pid);
      const u0 = cpuSeconds(upstreamPid);
      const d0 = cpuSecondsByName(DB_SERVERS);
      const h0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await run(pair[k]);
      const secs = (performance.now() - t0) / 1000;
      all[k]!.push({
        ...r,
        cpu: (cpuSeconds(pid) - c0) / secs,
        dbCpu: (cpuSecondsByName(DB_SERVERS) - d0) / secs,
        upstreamCpu: (cpuSeconds(upstreamPid) - u0) / secs,
        loadCpu: ((h) => h.user + h.system)(process.cpuUsage(h0)) / 1e6 / secs,
      });
    }
  return all.map((rs) => {
    const best = rs.reduce((a, b) => (b.rps > a.rps ? b : a));
    return {
      best: best.rps,
      runs: rs.map((r) => r.rps.toFixed(0)).join(','),
      rps: rs.map((r) => r.rps),
      // Share of a core used by the proxy / the fake upstream / the load generator in the best run.
      cpu: [best.cpu, best.upstreamCpu, best.loadCpu].map((c) => `${Math.round(c * 100)}%`).join('/'),
      cpuMsPerRequest: (best.cpu * 1000) / best.rps,
      // PostgreSQL and Redis (and any other instance of them on the machine) during the best run.
      dbCpuMsPerRequest: (best.dbCpu * 1000) / best.rps,
      all: rs,
    };
  });
}

/**
 * Gateway / baseline per round (the two runs of a round are adjacent in time, so a drift of the
 * machine's speed mostly cancels) and their median: steadier than the ratio of the two best runs,
 * which the noisiest single run decides.
 */
function roundRatios(baseline: number[], gateway: number[]) {
  const r = baseline.map((b, i) => (b > 0 ? gateway[i]! / b : 0));
  return {
    ratio_per_round: r.map((x) => x.toFixed(3)).join(','),
    ratio_median_of_rounds: round(median(r), 3),
  };
}

function checkErrors(
  rs: Array<{ errors: number; non2xx: number; ok: number }>,
  what: string,
  notes: string[],
) {
  for (const r of rs) {
    if (r.errors || r.non2xx)
      notes.push(`${what}: ${r.errors} errors, ${r.non2xx} non-2xx of ${r.ok + r.non2xx}`);
  }
}

function printTable(run: { database: string; figures: Record<string, Figure>; notes: string[] }) {
  const rows = Object.entries(run.figures).map(([k, f]) => {
    const extra = Object.entries(f)
      .filter(([n]) => !['unit', 'baseline', 'gateway', 'ratio'].includes(n))
      .map(([n, v]) => `${n}=${v}`)
      .join(' ');
    return `${k.padEnd(22)} ${String(f.baseline).padStart(10)} ${String(f.gateway).padStart(10)} ${f.unit.padEnd(6)} x${String(f.ratio).padEnd(7)} ${extra}`;
  });
  process.stdout.write(
    `\n${run.database}: ${'figure'.padEnd(13)} ${'baseline'.padStart(10)} ${'gateway'.padStart(10)}        ratio\n${rows.join('\n')}\n`,
  );
  for (const n of run.notes) process.stdout.write(`note: ${n}\n`);
}

function machine() {
  const c = cpus();
  return {
    cpu: c[0]?.model ?? 'unknown',
    cores: c.length,
    memory_gb: round(totalmem() / 2 ** 30, 1),
    node: process.version,
    pinning: canPin()
      ? `taskset: proxy under test on CPU ${PROXY_CPUS}; fake upstream and load generator on CPU ${LOAD_CPUS}`
      : 'none (taskset unavailable)',
  };
}

async function main() {
  const o = parseOptions(process.argv.slice(2));
  const outDir = join(ROOT, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  if (o.build) {
    process.stderr.write('compiling to bench/results/build.tmp ...\n');
    buildAll();
  }
  if (o.soak > 0) {
    const r = await soak(o.soak, o.pg, o.build);
    writeFileSync(
      join(outDir, o.pg ? 'soak-pg-latest.json' : 'soak-latest.json'),
      `${JSON.stringify({ machine: machine(), ...r }, null, 2)}\n`,
    );
    return;
  }
  if (o.profile > 0) {
    const sc = o.scenarios;
    // `--scenarios latency` alone profiles the paced rate (o.rate), where a request costs more.
    const mode =
      sc.size === 1 && sc.has('latency')
        ? 'paced'
        : sc.has('throughput') === sc.has('streaming')
          ? 'both'
          : sc.has('streaming')
            ? 'stream'
            : 'nonstream';
    await profile(o.profile, o.connections, {
      pg: o.pg,
      built: o.build,
      mode,
      target: o.profileBaseline ? 'baseline' : 'gateway',
      rate: o.rate,
    });
    return;
  }
  const started = Date.now();
  const runs = [];
  for (const pg of o.pg ? [false, true] : [false]) {
    const run = (await runScenarios(o, pg)) as {
      database: string;
      figures: Record<string, Figure>;
      notes: string[];
    };
    printTable(run);
    runs.push(run);
  }
  const out = {
    date: new Date().toISOString(),
    machine: machine(),
    options: { ...o, scenarios: [...o.scenarios] },
    seconds: round((Date.now() - started) / 1000, 1),
    runs,
  };
  writeFileSync(join(outDir, 'latest.json'), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`\nwritten bench/results/latest.json (${out.seconds} s)\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cannon, paced } from './load.js';
import { buildAll, GC_KINDS, probeArgs, writeProbe } from './procs.js';
import { startStack } from './stack.js';

/**
 * What the slow requests of a paced 1,000 req/s run ran into, for the baseline and the gateway:
 * each request slower than a threshold is matched against what its proxy recorded while it was
 * in flight: a GC pause (PerformanceObserver 'gc' entries) or an event-loop block (a 1 ms
 * interval timer firing late: JavaScript running, or the process not scheduled). Clocks are
 * each process's performance.timeOrigin + now(), the same system clock.
 * With --cpu-prof the gateway also runs under V8's sampling profiler (100 µs) and, after the
 * run, each of its loop blocks is broken down by what its main thread was doing meanwhile:
 * '(idle)' and '(program)' samples there mean the thread was not running JavaScript (another
 * thread or process had the core, or the process was not scheduled).
 * Usage: node --import tsx bench/tail.ts [seconds=10] [--no-build] [--pg] [--after-load] [--threshold ms=3] [--block-ms ms=2.5]
 *   [--cpu-prof] [--env K=V] [-- <extra node flags for the gateway>]
 */
const { own, extra, gatewayEnv, seconds } = probeArgs(process.argv.slice(2), 10);
const ti = own.indexOf('--threshold');
const threshold = ti >= 0 ? Number(own[ti + 1]) : 3;
const bi = own.indexOf('--block-ms');
/** A 1 ms interval timer firing this late marks a loop block (the timer's own slack is ~0.1-0.3 ms). */
const blockMs = bi >= 0 ? Number(own[bi + 1]) : 2.5;
if (!own.includes('--no-build')) buildAll();

const { dir, probe } = writeProbe(
  'tail',
  (dir) => `import { PerformanceObserver, performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
const now = () => performance.timeOrigin + performance.now();
let gcs = [], blocks = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) gcs.push([performance.timeOrigin + e.startTime, e.duration, e.detail?.kind ?? 0]); }).observe({ entryTypes: ['gc'] });
// The monotonic clock (V8's profile timestamps, µs) at a known wall time, to map one onto the other.
const mono = [now(), Number(process.hrtime.bigint() / 1000n)];
let last = now();
setInterval(() => { const t = now(); if (t - last > ${blockMs}) blocks.push([last, t - last]); last = t; }, 1).unref();
process.on('SIGUSR2', () => {
  writeFileSync(${JSON.stringify(dir)} + '/out-' + process.pid + '.json', JSON.stringify({ gcs, blocks, mono }));
  gcs = []; blocks = [];
});
`,
);
const cpuProf = own.includes('--cpu-prof');
const profDir = join(dir, 'prof');
const stack = await startStack({
  pg: own.includes('--pg'),
  built: true,
  withBaseline: true,
  gatewayFlags: [
    ...extra,
    ...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '100'] : []),
    '--import',
    probe,
  ],
  baselineFlags: ['--import', probe],
  gatewayEnv,
});
/** When the proxies were up: the timeline of slow requests counts seconds from here. */
const startedAt = Date.now();
type Ev = [number, number, number?];
/** The gateway's loop blocks of every round (wall ms, duration) and the probe's clock pair. */
const gatewayBlocks: Ev[] = [];
let gatewayMono: [number, number] | undefined;
try {
  const gw = {
    name: 'gateway',
    url: stack.gateway.url,
    headers: { authorization: `Bearer ${stack.apiKey}` },
  };
  const base = { name: 'baseline', url: stack.baseline!.url, headers: {} };
  const procs = { baseline: stack.baseline!, gateway: stack.gateway };
  if (own.includes('--after-load'))
    for (const stream of [false, true])
      for (const t of [base, gw]) await cannon(t, { stream, duration: 15, connections: 50 });
  await paced(gw, 1000, 3);
  await paced(base, 1000, 3);
  for (let round = 1; round <= 2; round++)
    for (const t of [base, gw]) {
      const p = procs[t.name as keyof typeof procs];
      const file = join(dir, `out-${p.pid}.json`);
      process.kill(p.pid, 'SIGUSR2'); // reset
      await new Promise((r) => setTimeout(r, 100));
      writeFileSync(file, ''); // what the reset dumped is not this round's
      const samples: Array<[number, number, number]> = [];
      const r = await paced(t, 1000, seconds, samples);
      process.kill(p.pid, 'SIGUSR2');
      let got: { gcs: Ev[]; blocks: Ev[]; mono: [number, number] } | undefined;
      for (let waited = 0; !got; waited += 100) {
        if (waited > 10_000) throw new Error(`${t.name} wrote no probe dump to ${file}`);
        await new Promise((r) => setTimeout(r, 100));
        try {
          got = JSON.parse(readFileSync(file, 'utf8'));
        } catch {}
      }
      writeFileSync(file, '');
      if (t.name === 'gateway') {
        gatewayBlocks.push(...got!.blocks);
        gatewayMono = got!.mono;
      }
      const overlaps = (evs: Ev[], s: number, e: number) => evs.filter(([t0, d]) => t0 < e && t0 + d > s);
      const slow = samples.filter(([, ms]) => ms > threshold);
      const cause: Record<string, number> = {};
      for (const [s, ms] of slow) {
        const g = overlaps(got!.gcs, s, s + ms);
        const k = g.length
          ? [...new Set(g.map(([, , kind]) => GC_KINDS[kind!] ?? String(kind)))].join('+')
          : overlaps(got!.blocks, s, s + ms).length
            ? 'loop block, no GC'
            : 'neither';
        cause[k] = (cause[k] ?? 0) + 1;
      }
      const gcBy: Record<string, { n: number; ms: number; max: number }> = {};
      for (const [, d, kind] of got!.gcs) {
        const name = GC_KINDS[kind!] ?? String(kind);
        const g = gcBy[name] ?? { n: 0, ms: 0, max: 0 };
        gcBy[name] = g;
        g.n++;
        g.ms += d;
        g.max = Math.max(g.max, d);
      }
      // Slow requests by second since the stack started ("s:count"), to tell a stall of minutes
      // (warm-up, a timer) from one spread over the round.
      const perSecond = new Map<number, number>();
      for (const [s] of slow) {
        const k = Math.floor((s - startedAt) / 1000);
        perSecond.set(k, (perSecond.get(k) ?? 0) + 1);
      }
      const timeline = [...perSecond]
        .sort((a, b) => a[0] - b[0])
        .map(([k, n]) => `${k}:${n}`)
        .join(' ');
      const blocks = got!.blocks.map(([, d]) => d).sort((a, b) => b - a);
      const fmt = (o: Record<string, { n: number; ms: number; max: number }>) =>
        Object.entries(o)
          .map(([k, v]) => `${k} ${v.n}x mean ${(v.ms / v.n).toFixed(2)} max ${v.max.toFixed(2)} ms`)
          .join(', ');
      process.stdout.write(
        `round ${round} ${t.name}: p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms; > ${threshold} ms: ${slow.length} of ${samples.length} ${JSON.stringify(cause)}\n` +
          `  slow by second since start: ${timeline || 'none'}\n` +
          `  gc: ${fmt(gcBy)}\n  loop blocks > ${blockMs} ms: ${blocks.length}, longest ${blocks
            .slice(0, 8)
            .map((d) => d.toFixed(1))
            .join(' ')}\n`,
      );
    }
  if (cpuProf) await stack.gateway.stop();
} finally {
  await stack.close();
}
if (cpuProf && gatewayMono) explainBlocks(gatewayBlocks, gatewayMono);

/** Self samples by function inside each loop block of the gateway, summed over all blocks. */
function explainBlocks(blocks: Ev[], [wall0, mono0]: [number, number]): void {
  const file = readdirSync(profDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(profDir, b)).size - statSync(join(profDir, a)).size)[0];
  if (!file) throw new Error(`no profile in ${profDir}`);
  const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const name = new Map<number, string>();
  for (const n of prof.nodes) {
    const cf = n.callFrame;
    const url = cf.url.replace(/^.*(node_modules|build\.tmp)\//, '');
    name.set(n.id, `${cf.functionName || '(anonymous)'}${url ? `  ${url}:${cf.lineNumber + 1}` : ''}`);
  }
  // Each sample's monotonic time, µs.
  const at: number[] = [];
  let t = prof.startTime;
  for (const d of prof.timeDeltas) {
    t += d;
    at.push(t);
  }
  const toMono = (wallMs: number) => mono0 + (wallMs - wall0) * 1000;
  const self = new Map<string, number>();
  let total = 0;
  const longest = [...blocks].sort((a, b) => b[1] - a[1]);
  const lines: string[] = [];
  for (const [w, d] of longest) {
    const from = toMono(w);
    const to = toMono(w + d);
    const here = new Map<string, number>();
    for (let i = 0; i < at.length; i++)
      if (at[i]! >= from && at[i]! < to) {
        const k = name.get(prof.samples[i]!) ?? '?';
        self.set(k, (self.get(k) ?? 0) + 1);
        here.set(k, (here.get(k) ?? 0) + 1);
        total++;
      }
    if (lines.length < 12)
      lines.push(
        `  ${d.toFixed(1)} ms: ${[...here]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 4)
          .map(([k, n]) => `${k.split('  ')[0]} ${n}`)
          .join(', ')}`,
      );
  }
  process.stdout.write(
    `\ngateway loop blocks > ${blockMs} ms: ${blocks.length}, ${total} samples (100 µs) inside them; by function:\n`,
  );
  for (const [k, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25))
    process.stdout.write(`${((100 * n) / Math.max(1, total)).toFixed(1).padStart(6)}%  ${k}\n`);
  process.stdout.write(`the longest blocks (top self samples):\n${lines.join('\n')}\n`);
}

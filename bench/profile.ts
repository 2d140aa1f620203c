import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatSummary, summarize } from './cpuprofile-top.js';
import { writeFlame } from './flamegraph.js';
import { cannon, paced } from './load.js';
import { ROOT } from './procs.js';
import { startStack } from './stack.js';

/**
 * Runs the gateway (or, with `target: 'baseline'`, the baseline proxy) with --cpu-prof, warms it
 * up for 12 s, drives it at saturation (half the time non-streaming, half streaming), stops it so
 * V8 writes the profile, and prints the top functions of the measured window only (start-up and
 * warm-up left out), with the requests served, so two profiles compare per request. The raw
 * .cpuprofile stays in a temp dir (Chrome DevTools and speedscope open it); the summary goes to
 * bench/results/profile-<db>-<mode>-latest.txt and a flame graph of the same window to
 * bench/results/flame-<db>-<mode>-latest.svg (`flamegraph.ts`; any browser shows it).
 * Mode 'paced' drives non-streaming requests at an even `rate` per second instead (paced() in
 * load.ts), the latency scenario's load.
 */
export async function profile(
  seconds: number,
  connections: number,
  o: {
    pg?: boolean;
    built?: boolean;
    mode?: 'both' | 'stream' | 'nonstream' | 'paced';
    target?: 'gateway' | 'baseline';
    rate?: number;
  } = {},
): Promise<void> {
  const { pg = false, built = false, mode = 'both', target = 'gateway' } = o;
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-prof-'));
  const flags = ['--cpu-prof', '--cpu-prof-dir', dir];
  const stack = await startStack({
    pg,
    built,
    withBaseline: target === 'baseline',
    gatewayFlags: target === 'gateway' ? flags : [],
    baselineFlags: target === 'baseline' ? flags : [],
  });
  let served = 0;
  let measuredMs = 0;
  let shutdownMs = 0;
  try {
    const proc = target === 'baseline' ? stack.baseline! : stack.gateway;
    const t = stack.target(target);
    const kinds = mode === 'both' ? [false, true] : [mode === 'stream'];
    const each = Math.max(1, Math.round(seconds / kinds.length));
    if (mode === 'paced') {
      const rate = o.rate ?? 1000;
      await paced(t, rate, 3);
      const started = Date.now();
      const r = await paced(t, rate, seconds);
      served += r.ok;
      measuredMs = Date.now() - started;
      process.stderr.write(`profiled load: paced ${rate} req/s, p99 ${r.p99.toFixed(2)} ms\n`);
    } else {
      // 12 s, as the full run's warm-up: the gateway's JIT settles after ~10 s of saturation, and
      // a profile taken before shows the optimizing compiler and cold code (session 26).
      for (const stream of kinds) await cannon(t, { stream, duration: 12 / kinds.length, connections });
      const started = Date.now();
      for (const stream of kinds) {
        const r = await cannon(t, { stream, duration: each, connections });
        served += r.ok;
        process.stderr.write(
          `profiled load: ${r.rps.toFixed(0)} req/s ${stream ? 'streaming' : 'non-streaming'}\n`,
        );
      }
      measuredMs = Date.now() - started;
    }
    // What the process does from here to its exit (closing the database, the last request-log
    // batch) is in the profile too, after the window: measured, to be left out.
    const loadEnded = Date.now();
    await proc.stop();
    shutdownMs = Date.now() - loadEnded;
  } finally {
    await stack.close();
  }
  // V8 writes one profile per thread; the main thread's is the large one.
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (!file) throw new Error(`no profile written in ${dir}`);
  const summary = summarize(join(dir, file), 30, measuredMs, shutdownMs);
  const text =
    `profile: ${join(dir, file)}\n${target}, last ${(measuredMs / 1000).toFixed(1)} s before shutdown ` +
    `(${(shutdownMs / 1000).toFixed(2)} s): ${served} requests, ` +
    `${((summary.totalMs * 1000) / Math.max(1, served)).toFixed(1)} µs of sampled CPU per request\n` +
    formatSummary(summary);
  const stem = `${target === 'baseline' ? 'baseline-' : ''}${pg ? 'pg' : 'sqlite'}-${mode}`;
  writeFileSync(join(ROOT, 'bench/results', `profile-${stem}-latest.txt`), text);
  const flame = join(ROOT, 'bench/results', `flame-${stem}-latest.svg`);
  writeFlame(join(dir, file), flame, {
    lastMs: measuredMs,
    skipLastMs: shutdownMs,
    title: `${target}, ${pg ? 'PostgreSQL + Redis' : 'SQLite'}, ${mode}: ${served} requests in the last ${(measuredMs / 1000).toFixed(1)} s`,
  });
  process.stdout.write(`${text}flame graph: ${flame}\n`);
}

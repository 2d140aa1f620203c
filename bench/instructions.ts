import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cannon, median } from './load.js';
import { buildAll, callgrind, callgrindTotal, numberArg } from './procs.js';
import { startStack } from './stack.js';

/**
 * Instructions per request, counted by valgrind (callgrind) in the proxy under test: the one
 * CPU figure this shared machine cannot move. Wall-clock CPU per request of the same build moves
 * by 1.5x between 2 s windows here (bench/run.ts's rounds), while an instruction count repeats
 * within a few percent, so a change of a few percent on the request path can be told from noise.
 * Not deaf to the machine's load, though: under a load average of ~30 the same code read ~9%
 * high (session 52; fewer requests to each event-loop turn), so compare counts taken side by side.
 * Instructions are not time (cache misses, branch mispredictions and syscalls' kernel side are
 * not in them), so this complements the saturation figures, never replaces them.
 *
 * Each proxy in turn runs under `valgrind --tool=callgrind` (all its threads: V8's compiler and
 * GC helpers, libuv's pool, the SQLite checkpointer); the fake upstream and the load generator
 * run natively. After a warm-up, each window zeroes the counters, sends a fixed number of
 * requests over 10 connections and dumps: Ir of the window / its requests. Windows differ by
 * what V8 does in them (a major GC, a late re-optimization), so the median is the figure.
 *
 * Usage: node --import tsx bench/instructions.ts [--requests 3000] [--windows 5]
 *   [--warmup 20000] [--stream] [--pg] [--only baseline|gateway] [--no-build] [--objects]
 *   [--functions <n>]
 * `--objects` also splits the last window by where the instructions ran: JIT code ('???'), the
 * node binary (V8's builtins, interpreter, compiler and GC, and Node's C++), libc,
 * better-sqlite3; `--functions <n>` lists its n costliest functions. Needs valgrind; takes
 * ~6 minutes for the baseline and ~17 for the gateway with the default 20,000 warm-up requests
 * (with fewer, the gateway's windows still fall as V8 optimizes: 8,000 left it ~15% high).
 */
const requests = numberArg('requests', 3000);
const windows = numberArg('windows', 5);
const warmup = numberArg('warmup', 20000);
const stream = process.argv.includes('--stream');
const pg = process.argv.includes('--pg');
const objects = process.argv.includes('--objects');
const functions = numberArg('functions', 0);
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
const CONNECTIONS = 10;

if (!process.argv.includes('--no-build')) buildAll();

/**
 * Self Ir of the dump by ELF object ("???" is code without a file: V8's JIT output) and by
 * function (object:function; V8's builtins and interpreter handlers are named, JIT code is not).
 */
function selfCosts(file: string): { objects: Map<string, number>; functions: Map<string, number> } {
  // Compressed names: "(id) name" the first time, "(id)" after; objects and functions apart.
  const tables = { ob: new Map<string, string>(), fn: new Map<string, string>() };
  const name = (kind: 'ob' | 'fn', v: string) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(v);
    if (!m) return v;
    if (m[2] !== undefined) tables[kind].set(m[1]!, m[2]);
    return tables[kind].get(m[1]!) ?? v;
  };
  const objects = new Map<string, number>();
  const functions = new Map<string, number>();
  let ob = '';
  let fn = '';
  let afterCalls = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('ob=')) ob = name('ob', line.slice(3));
    else if (line.startsWith('fn=')) fn = name('fn', line.slice(3));
    else if (line.startsWith('cob=')) name('ob', line.slice(4));
    else if (line.startsWith('cfn=')) name('fn', line.slice(4));
    else if (line.startsWith('calls=')) afterCalls = true;
    else if (/^[+-]?\d/.test(line)) {
      // The line after calls= is the call's inclusive cost, not the caller's own.
      if (!afterCalls) {
        const ir = Number(line.split(' ')[1] ?? 0);
        const short = ob.split('/').pop() ?? ob;
        objects.set(short, (objects.get(short) ?? 0) + ir);
        const f = `${short}:${fn}`;
        functions.set(f, (functions.get(f) ?? 0) + ir);
      }
      afterCalls = false;
    }
  }
  return { objects, functions };
}

async function measure(which: 'baseline' | 'gateway'): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-callgrind-'));
  const wrap = callgrind(join(dir, 'cg.%p'));
  const stack = await startStack({
    pg,
    built: true,
    withBaseline: which === 'baseline',
    ...(which === 'baseline' ? { baselineWrap: wrap } : { gatewayWrap: wrap }),
    startTimeoutMs: 600_000,
  });
  try {
    const p = which === 'baseline' ? stack.baseline! : stack.gateway;
    const t = stack.target(which);
    const w = await cannon(t, { stream, amount: warmup, connections: CONNECTIONS });
    if (w.ok < warmup) process.stderr.write(`${which}: warm-up got ${w.ok} of ${warmup} answers\n`);
    const perRequest: number[] = [];
    let last = '';
    for (let i = 0; i < windows; i++) {
      execFileSync('callgrind_control', ['-z', String(p.pid)], { stdio: 'ignore' });
      const r = await cannon(t, { stream, amount: requests, connections: CONNECTIONS });
      const before = readdirSync(dir).length;
      execFileSync('callgrind_control', [`--dump=window${i}`, String(p.pid)], { stdio: 'ignore' });
      for (let t = 0; readdirSync(dir).length === before && t < 600; t++) await sleep(100);
      await sleep(500); // the dump is written in one go, but let it finish
      const files = readdirSync(dir)
        .filter((f) => /^cg\.\d+\.\d+$/.test(f))
        .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
      last = join(dir, files.at(-1)!);
      if (r.ok !== requests || r.errors)
        process.stderr.write(`${which}: window ${i}: ${r.ok} answers, ${r.errors} errors or timeouts\n`);
      perRequest.push(callgrindTotal(last) / r.ok);
    }
    if (objects || functions) {
      const costs = selfCosts(last);
      const print = (m: Map<string, number>, n: number) => {
        const rows = [...m].sort((a, b) => b[1] - a[1]);
        const total = rows.reduce((s, [, v]) => s + v, 0);
        for (const [k, ir] of rows.slice(0, n))
          process.stdout.write(
            `  ${which} ${((ir / total) * 100).toFixed(1).padStart(5)}% ${Math.round(ir / requests)
              .toLocaleString('en')
              .padStart(8)} Ir/req  ${k.slice(0, 110)}\n`,
          );
      };
      if (objects) print(costs.objects, 12);
      if (functions) print(costs.functions, functions);
    }
    return perRequest;
  } finally {
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const kIr = (x: number) => `${(x / 1000).toFixed(1)}k`;
const results: Partial<Record<'baseline' | 'gateway', number>> = {};
for (const which of ['baseline', 'gateway'] as const) {
  if (only && only !== which) continue;
  const xs = await measure(which);
  results[which] = median(xs);
  process.stdout.write(
    `${which.padEnd(8)} ${stream ? 'streaming' : 'non-streaming'}${pg ? ' (PostgreSQL + Redis)' : ''}: ` +
      `${kIr(median(xs))} instructions per request (windows: ${xs.map(kIr).join(', ')})\n`,
  );
}
if (results.baseline && results.gateway)
  process.stdout.write(`ratio gateway / baseline: ${(results.gateway / results.baseline).toFixed(3)}\n`);

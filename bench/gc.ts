import { cannon } from './load.js';
import { buildAll, probeArgs } from './procs.js';
import { startStack } from './stack.js';

/**
 * What the garbage collector does per request under saturation, from V8's own trace
 * (`--trace-gc-nvp`): scavenges and mark-compacts, their pauses, and the bytes promoted to the
 * old generation per request (what a major GC must later collect, and what RSS carries until
 * then). `--pg` runs the gateway on PostgreSQL + Redis; `--env NAME=value` (repeatable) adds to
 * the gateway's environment, e.g. a config setting.
 * Usage: node --import tsx bench/gc.ts [--stream] [--baseline] [--pg] [--env K=V] [--no-build] [-- <node flags for the proxy>]
 */
const { own, extra, gatewayEnv } = probeArgs(process.argv.slice(2), 5);
const stream = own.includes('--stream');
const base = own.includes('--baseline');
const pg = own.includes('--pg');
if (!own.includes('--no-build')) buildAll();
const flags = ['--trace-gc-nvp', ...extra];
const stack = await startStack({
  built: true,
  pg: pg && !base,
  withBaseline: base,
  gatewayFlags: base ? [] : flags,
  baselineFlags: base ? flags : [],
  gatewayEnv,
});
try {
  const p = base ? stack.baseline! : stack.gateway;
  const t = { name: p.name, url: p.url, headers: { authorization: `Bearer ${stack.apiKey}` } };
  await cannon(t, { stream, duration: 5, connections: 50 }); // warm-up
  let out = '';
  p.child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const seconds = 5;
  const r = await cannon(t, { stream, duration: seconds, connections: 50 });
  const kinds = new Map<string, { n: number; promoted: number; pause: number }>();
  for (const line of out.split('\n')) {
    const gc = /\bgc=(\w+)/.exec(line)?.[1];
    if (!gc) continue;
    const num = (k: string) => Number(new RegExp(`\\b${k}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    const e = kinds.get(gc) ?? { n: 0, promoted: 0, pause: 0 };
    e.n++;
    e.promoted += num('promoted');
    e.pause += num('pause');
    kinds.set(gc, e);
  }
  const names: Record<string, string> = { s: 'scavenge', mc: 'mark-compact', ms: 'minor mark-sweep' };
  process.stdout.write(
    `${p.name}, ${stream ? 'streaming' : 'non-streaming'}: ${r.ok} requests in ${seconds} s (${r.rps.toFixed(0)} req/s)\n`,
  );
  for (const [gc, e] of kinds)
    process.stdout.write(
      `  ${(names[gc] ?? gc).padEnd(14)} ${String(e.n).padStart(4)}  pauses ${e.pause.toFixed(0).padStart(4)} ms ` +
        `(${((e.pause / (seconds * 1000)) * 100).toFixed(1)}% of the time)  promoted ${(e.promoted / 1024 / r.ok).toFixed(2)} KB per request\n`,
    );
} finally {
  await stack.close();
}

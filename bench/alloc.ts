import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cannon } from './load.js';
import { buildAll, writeProbe } from './procs.js';
import { startStack } from './stack.js';

/**
 * Bytes allocated per non-streaming request, by allocating function, for the baseline and the
 * gateway (V8's sampling heap profiler, counting objects that minor and major GCs already
 * collected). Allocation drives scavenges, which are most of the gateway's latency tail.
 * With --promoted, only what survived the scavenges (objects young collections did not free:
 * promoted to the old generation, or still young at the end), which is what grows the old
 * generation between major GCs.
 * Usage: node --import tsx bench/alloc.ts [rows=25] [--no-build] [--promoted] [--stream] [-- <node flags for both proxies>]
 */
const rows = Number(process.argv[2]) > 0 ? Number(process.argv[2]) : 25;
if (!process.argv.includes('--no-build')) buildAll();
const { dir, probe } = writeProbe(
  'alloc',
  (dir) => `import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
const s = new Session();
s.connect();
let on = false;
process.on('SIGUSR2', () => {
  if (!on) {
    on = true;
    s.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMinorGC: ${!process.argv.includes('--promoted')}, includeObjectsCollectedByMajorGC: true });
  } else {
    s.post('HeapProfiler.stopSampling', (err, r) => writeFileSync(${JSON.stringify(join(dir, 'out-'))} + process.pid + '.json', JSON.stringify(r.profile)));
  }
});
`,
);
const dash = process.argv.indexOf('--');
const flags = ['--import', probe, ...(dash >= 0 ? process.argv.slice(dash + 1) : [])];
const stack = await startStack({
  built: true,
  withBaseline: true,
  gatewayFlags: flags,
  baselineFlags: flags,
});
try {
  const runs: Array<[string, typeof stack.gateway, Record<string, string>]> = [
    ['baseline', stack.baseline!, {}],
    ['gateway', stack.gateway, { authorization: `Bearer ${stack.apiKey}` }],
  ];
  for (const [name, p, headers] of runs) {
    const t = { name, url: p.url, headers };
    const stream = process.argv.includes('--stream');
    await cannon(t, { stream, duration: 3, connections: 50 }); // warm-up
    process.kill(p.pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 200));
    const r = await cannon(t, { stream, duration: 4, connections: 50 });
    process.kill(p.pid, 'SIGUSR2');
    // The profile is written when the inspector answers: wait until the file is whole.
    let prof: any;
    for (let waited = 0; prof === undefined; waited += 250) {
      await new Promise((r) => setTimeout(r, 250));
      try {
        prof = JSON.parse(readFileSync(join(dir, `out-${p.pid}.json`), 'utf8'));
      } catch (err) {
        if (waited > 20_000) throw err;
      }
    }
    const self = new Map<string, number>();
    let total = 0;
    const walk = (n: {
      callFrame: { functionName: string; url: string; lineNumber: number };
      selfSize: number;
      children?: unknown[];
    }) => {
      const cf = n.callFrame;
      const k = `${cf.functionName || '(anonymous)'}  ${String(cf.url).replace(/^.*(node_modules|build\.tmp)\//, '')}:${cf.lineNumber + 1}`;
      self.set(k, (self.get(k) ?? 0) + n.selfSize);
      total += n.selfSize;
      for (const c of n.children ?? []) walk(c as typeof n);
    };
    walk(prof.head);
    process.stdout.write(
      `\n${name}: ${(total / r.ok / 1024).toFixed(1)} KB ${process.argv.includes('--promoted') ? 'surviving scavenges' : 'allocated'} per request (${r.ok} requests)\n`,
    );
    for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, rows))
      process.stdout.write(`${(v / r.ok).toFixed(0).padStart(7)} B  ${k}\n`);
  }
} finally {
  await stack.close();
}

import { cannon, paced } from './load.js';
import { buildAll, GC_KINDS, probeArgs, writeProbe } from './procs.js';
import { startStack } from './stack.js';

/**
 * Where the gateway's latency tail comes from at a paced 1,000 req/s: event-loop delay (1 ms
 * resolution) and garbage-collection pauses inside the gateway, next to the client-side p50/p99
 * of the gateway and the baseline in the same rounds.
 * `--after-load` first drives both proxies at saturation for 30 s each (non-streaming, then
 * streaming), as the harness's scenarios before its latency one do.
 * `--env NAME=value` (repeatable) adds to the gateway's environment, e.g. a config setting.
 * Usage: node --import tsx bench/pauses.ts [seconds=8] [--no-build] [--pg] [--after-load] [--env K=V] [-- <extra node flags for the gateway>]
 */
const { own: args, extra, gatewayEnv, seconds } = probeArgs(process.argv.slice(2), 8);
if (!args.includes('--no-build')) buildAll();

const { probe } = writeProbe(
  'pauses',
  () => `import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
const gcs = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) gcs.push([e.detail?.kind ?? 0, e.duration]); }).observe({ entryTypes: ['gc'] });
process.on('SIGUSR2', () => {
  const ms = (n) => Math.round(n / 1e4) / 100;
  const kinds = ${JSON.stringify(GC_KINDS)};
  const gc = {};
  for (const [k, d] of gcs) { const g = (gc[kinds[k] ?? k] ??= { n: 0, ms: 0, max_ms: 0 }); g.n++; g.ms = Math.round((g.ms + d) * 100) / 100; g.max_ms = Math.max(g.max_ms, Math.round(d * 100) / 100); }
  process.stderr.write('PAUSES ' + JSON.stringify({ loop_delay_ms: { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), p999: ms(h.percentile(99.9)), max: ms(h.max) }, gc }) + '\\n');
  h.reset(); gcs.length = 0;
});
`,
);
const stack = await startStack({
  pg: args.includes('--pg'),
  built: true,
  withBaseline: true,
  gatewayFlags: [...extra, '--import', probe],
  gatewayEnv,
});
try {
  const gw = {
    name: 'gateway',
    url: stack.gateway.url,
    headers: { authorization: `Bearer ${stack.apiKey}` },
  };
  const base = { name: 'baseline', url: stack.baseline!.url, headers: {} };
  if (args.includes('--after-load'))
    for (const stream of [false, true])
      for (const t of [base, gw]) await cannon(t, { stream, duration: 15, connections: 50 });
  // Warm-up, both: the baseline's first paced seconds after start read p99s of 0.1-1.5 s.
  await paced(gw, 1000, 3);
  await paced(base, 1000, 3);
  for (let round = 1; round <= 2; round++) {
    const rb = await paced(base, 1000, seconds);
    process.kill(stack.gateway.pid, 'SIGUSR2'); // reset the probe: only the gateway's own run counts
    await new Promise((r) => setTimeout(r, 100));
    const rg = await paced(gw, 1000, seconds);
    process.kill(stack.gateway.pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 300));
    const line =
      stack.gateway
        .stderr()
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('PAUSES '))
        .at(-1) ?? '';
    process.stdout.write(
      `round ${round}: client p50/p99 ms baseline ${rb.p50.toFixed(2)}/${rb.p99.toFixed(2)}, gateway ${rg.p50.toFixed(2)}/${rg.p99.toFixed(2)}\n` +
        `  inside the gateway (${seconds} s, loop delay includes the 1 ms timer resolution): ${line.slice(7)}\n`,
    );
  }
} finally {
  await stack.close();
}

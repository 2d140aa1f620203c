import { cannon } from './load.js';
import { buildAll, cpuSeconds } from './procs.js';
import { startStack } from './stack.js';

/**
 * CPU per non-streaming request of the gateway with one feature at a time turned off, so each
 * feature's cost can be read as a difference: `node --import tsx bench/attribute.ts [seconds]`
 * (after `npm run bench -- --build` has compiled into bench/results/build.tmp).
 */
const seconds = Number(process.argv[2] ?? 4);
if (!process.argv.includes('--no-build')) buildAll();
const variants: Array<{
  name: string;
  env?: Record<string, string>;
  quota?: number | null;
  flags?: string[];
}> = [
  { name: 'baseline proxy' },
  { name: 'production (key with quota)' },
  { name: 'semi-space 32 MB', flags: ['--max-semi-space-size=32'] },
  { name: 'unlimited key', quota: null },
  { name: 'unlimited key, metrics off', quota: null, env: { MODELGATE_METRICS_ENABLED: 'false' } },
];
for (const v of variants) {
  const base = v.name === 'baseline proxy';
  const stack = await startStack({
    built: true,
    withBaseline: base,
    gatewayEnv: v.env,
    keyQuota: v.quota,
    gatewayFlags: v.flags,
  });
  try {
    const p = base ? stack.baseline! : stack.gateway;
    const t = { name: 'gw', url: p.url, headers: { authorization: `Bearer ${stack.apiKey}` } };
    await cannon(t, { stream: false, duration: 5, connections: 50 }); // warm-up: JIT tiers settle
    const rows: number[] = [];
    const rps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const c0 = cpuSeconds(p.pid);
      const r = await cannon(t, { stream: false, duration: seconds, connections: 50 });
      rows.push(((cpuSeconds(p.pid) - c0) * 1000) / (r.rps * seconds));
      rps.push(r.rps);
    }
    process.stdout.write(
      `${v.name.padEnd(32)} cpu ms/req ${rows.map((x) => x.toFixed(4)).join(' ')}  req/s ${rps.map((x) => x.toFixed(0)).join(' ')}\n`,
    );
  } finally {
    await stack.close();
  }
}

import { cannon } from './load.js';
import { buildAll, cpuSeconds, cpuSecondsByName } from './procs.js';
import { startStack } from './stack.js';

/**
 * CPU per non-streaming request of the gateway with one feature at a time turned off, so each
 * feature's cost can be read as a difference: `node --import tsx bench/attribute.ts [seconds]`
 * (after `npm run bench -- --build` has compiled into bench/results/build.tmp).
 * `--pg` runs the gateway on PostgreSQL + Redis and also prints the CPU the database servers
 * spent per request (they are not pinned, so on this machine they share the gateway's core);
 * `--only <text>` keeps the variants whose name contains the text.
 */
const seconds = Number(process.argv[2]?.startsWith('--') ? 4 : (process.argv[2] ?? 4));
const pg = process.argv.includes('--pg');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
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
  { name: 'V8 --optimize-for-size', flags: ['--optimize-for-size'] },
  { name: 'V8 --maglev', flags: ['--maglev'] },
  {
    name: 'V8 semi-space 8, heap growing 50%',
    flags: ['--max-semi-space-size=8', '--heap-growing-percent=50'],
  },
  { name: 'V8 heap growing 50%', flags: ['--heap-growing-percent=50'] },
  { name: 'unlimited key', quota: null },
  { name: 'unlimited key, metrics off', quota: null, env: { MODELGATE_METRICS_ENABLED: 'false' } },
];
const servers = (process.env.BENCH_DB_SERVERS ?? 'postgres,redis-server').split(',');
for (const v of variants) {
  if (only && !v.name.includes(only)) continue;
  const base = v.name === 'baseline proxy';
  const stack = await startStack({
    pg: pg && !base,
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
    const db: number[] = [];
    const rps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const c0 = cpuSeconds(p.pid);
      const s0 = cpuSecondsByName(servers);
      const r = await cannon(t, { stream: false, duration: seconds, connections: 50 });
      const n = r.rps * seconds;
      rows.push(((cpuSeconds(p.pid) - c0) * 1000) / n);
      db.push(((cpuSecondsByName(servers) - s0) * 1000) / n);
      rps.push(r.rps);
    }
    const fmt = (xs: number[], d: number) => xs.map((x) => x.toFixed(d)).join(' ');
    process.stdout.write(
      `${v.name.padEnd(32)} cpu ms/req ${fmt(rows, 4)}  req/s ${fmt(rps, 0)}` +
        (pg ? `  db servers ms/req ${fmt(db, 4)}` : '') +
        '\n',
    );
  } finally {
    await stack.close();
  }
}

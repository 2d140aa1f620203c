import { PacedGenerator } from './load.js';
import {
  benchServer,
  buildAll,
  cleanEnv,
  coreTimes,
  pinSelf,
  startNode,
  stealPct,
  stealText,
} from './procs.js';
import { LOAD_CPUS, PROXY_CPUS } from './stack.js';

/**
 * What the host alone adds to the paced latency figure: the same fake upstream twice, one on the
 * load generator's core (as the harness runs it) and one on the proxies' core, driven by the
 * paced generator in interleaved slices (1,000 req/s). No proxy is involved: the difference is
 * what a request pays for crossing between the two cores and back, which every request through
 * a proxy does twice (generator -> proxy -> upstream -> proxy -> generator) and a direct request
 * not at all. On a virtual machine whose idle vCPUs must be woken by the host, that crossing
 * has a tail of its own (docs/performance.md, session 26). Each round also prints the share of
 * each core's time the hypervisor stole (`steal` in /proc/stat) while it ran.
 * Usage: node --import tsx bench/hops.ts [rounds=3] [--no-build]
 */
const rounds = Number(process.argv[2]) > 0 ? Number(process.argv[2]) : 3;
if (!process.argv.includes('--no-build')) buildAll();
pinSelf(LOAD_CPUS);
const start = (cpus: string) =>
  startNode({
    name: `upstream@${cpus}`,
    args: benchServer('bench/fake-upstream.ts', true),
    env: cleanEnv({ PORT: '0' }),
    cpus,
    ready: /listening on (http:\S+)/,
  });
const same = await start(LOAD_CPUS);
const other = await start(PROXY_CPUS);
const gen = PacedGenerator.open();
try {
  const targets = [
    { name: `upstream on the generator's core (${LOAD_CPUS})`, url: same.url, headers: {} },
    { name: `upstream on the other core (${PROXY_CPUS})`, url: other.url, headers: {} },
  ];
  await gen.interleaved(targets, 1000, 1, 3); // warm-up
  const rows: string[][] = targets.map(() => []);
  // Each upstream's core, for the hypervisor's steal on it during the round.
  const cores = [LOAD_CPUS, PROXY_CPUS];
  for (let i = 0; i < rounds; i++) {
    const t0 = cores.map(coreTimes);
    const results = await gen.interleaved(targets, 1000, 1, 10);
    const t1 = cores.map(coreTimes);
    for (const [k, r] of results.entries()) {
      rows[k]!.push(
        `p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms, steal ${stealText(stealPct(t0[k], t1[k]), '%')}`,
      );
    }
  }
  for (const [k, t] of targets.entries()) process.stdout.write(`${t.name}: ${rows[k]!.join(' | ')}\n`);
} finally {
  gen.close();
  await Promise.all([same.stop(), other.stop()]);
}

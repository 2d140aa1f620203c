import { cannon, median, PacedGenerator } from './load.js';
import { buildAll, coreTimes, cpuSeconds, stealPct, stealText } from './procs.js';
import { PROXY_CPUS, startStack } from './stack.js';

/**
 * Node/V8 flags for the gateway, A/B in one interleaved paced run: two gateways of the same build
 * (A with the default flags, B with the flags after `--`), the baseline and the direct upstream,
 * cycled in 1 s slices at 1,000 req/s, so a stall of the machine lands on all four alike. Prints
 * each target's p50/p99 per round, the CPU per request of both gateways and the share of the
 * proxies' core the hypervisor stole during the round.
 * B can also differ in its environment (`--env-b NAME=value`, repeatable) or run with an
 * unlimited bench key (`--unlimited-b`: no quota reservation per request).
 * `--saturation` compares the two gateways at saturation instead: after 12 s more warm-up each,
 * per round one 5 s autocannon window on each (50 connections, the order alternating between
 * rounds), their req/s and CPU per request, and the medians of B's ratios to A over the rounds.
 * Session 40's A/A read x0.965 and two flags that make the same process (--v8-pool-size=1 and
 * =0 on two CPUs) x0.868 and x1.012: differences under ~10% are the host's, not the flags'.
 * Usage: node --import tsx bench/flags-ab.ts [rounds=3] [--slices 20] [--saturation] [--pg] [--no-build] [--env-b K=V] [--unlimited-b] -- <node flags for B>
 */
const argv = process.argv.slice(2);
const dd = argv.indexOf('--');
const own = dd >= 0 ? argv.slice(0, dd) : argv;
const flagsB = dd >= 0 ? argv.slice(dd + 1) : [];
const rounds = Number(own.find((a) => /^\d+$/.test(a)) ?? 3);
const si = own.indexOf('--slices');
const slices = si >= 0 ? Number(own[si + 1]) : 20;
const pg = own.includes('--pg');
const envB: Record<string, string> = {};
own.forEach((a, i) => {
  if (a !== '--env-b') return;
  const kv = own[i + 1] ?? '';
  const eq = kv.indexOf('=');
  if (eq <= 0) throw new Error('--env-b takes NAME=value');
  envB[kv.slice(0, eq)] = kv.slice(eq + 1);
});
const unlimitedB = own.includes('--unlimited-b');
const saturation = own.includes('--saturation');
if (!own.includes('--no-build')) buildAll();
const a = await startStack({ built: true, pg, withBaseline: true });
const b = await startStack({
  built: true,
  pg,
  withBaseline: false,
  gatewayFlags: flagsB,
  gatewayEnv: envB,
  ...(unlimitedB ? { keyQuota: null } : {}),
});
const gen = PacedGenerator.open();
const up = { name: 'upstream', url: `${a.upstream.url}`, headers: {} };
const targets = [up, a.target('baseline'), a.target('gateway'), { ...b.target('gateway'), name: 'B' }];
try {
  for (const t of targets.slice(1)) await cannon(t, { stream: false, duration: 5, connections: 50 });
  const envText = Object.entries(envB).map(([k, v]) => `${k}=${v}`);
  console.log(
    `B flags: ${flagsB.join(' ') || '(none)'}; env: ${envText.join(' ') || '(same)'}; key: ${unlimitedB ? 'unlimited' : 'with quota'}; ${saturation ? 'one 5 s saturation window per gateway and round' : `${slices} slices of 1 s per target and round`}`,
  );
  if (saturation) await saturationRounds();
  else await pacedRounds();
} finally {
  gen.close();
  await b.close();
  await a.close();
}

/** Interleaved paced slices on all four targets (the default). */
async function pacedRounds(): Promise<void> {
  await gen.interleaved(targets, 1000, 1, 2); // the generator's warm-up, not measured
  for (let r = 1; r <= rounds; r++) {
    const c0 = [a.gateway.pid, b.gateway.pid].map(cpuSeconds);
    const s0 = coreTimes(PROXY_CPUS);
    const res = await gen.interleaved(targets, 1000, 1, slices);
    const c1 = [a.gateway.pid, b.gateway.pid].map(cpuSeconds);
    // The hypervisor's steal on the proxies' core: a round with a few percent stolen measured the host.
    const steal = stealPct(s0, coreTimes(PROXY_CPUS));
    const n = slices * 1000;
    console.log(
      `round ${r}: ` +
        targets
          .map((t, i) => `${t.name} p50 ${res[i]!.p50.toFixed(3)} p99 ${res[i]!.p99.toFixed(3)}`)
          .join(' | ') +
        ` | cpu ms/req A ${(((c1[0]! - c0[0]!) * 1000) / n).toFixed(3)} B ${(((c1[1]! - c0[1]!) * 1000) / n).toFixed(3)}` +
        ` | steal ${stealText(steal, '%')} of the proxies' core`,
    );
  }
}

/** Alternating saturation windows on the two gateways (`--saturation`). */
async function saturationRounds(): Promise<void> {
  const gws = [
    { name: 'A', t: a.target('gateway'), pid: a.gateway.pid },
    { name: 'B', t: { ...b.target('gateway'), name: 'B' }, pid: b.gateway.pid },
  ];
  // As the harness does before its saturation rounds (run.ts --warmup): V8 is still optimizing
  // the gateway after the 5 s above, and its rounds would read that.
  for (const g of gws) await cannon(g.t, { stream: false, duration: 12, connections: 50 });
  const rpsRatio: number[] = [];
  const cpuRatio: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    const got = new Map<string, { rps: number; cpu: number }>();
    for (const g of r % 2 === 1 ? gws : [...gws].reverse()) {
      const c0 = cpuSeconds(g.pid);
      const res = await cannon(g.t, { stream: false, duration: 5, connections: 50 });
      got.set(g.name, { rps: res.rps, cpu: ((cpuSeconds(g.pid) - c0) * 1000) / (res.rps * 5) });
    }
    const A = got.get('A')!;
    const B = got.get('B')!;
    rpsRatio.push(B.rps / A.rps);
    cpuRatio.push(B.cpu / A.cpu);
    console.log(
      `round ${r}: req/s A ${A.rps.toFixed(0)} B ${B.rps.toFixed(0)} | cpu ms/req A ${A.cpu.toFixed(4)} B ${B.cpu.toFixed(4)}`,
    );
  }
  console.log(
    `B / A, median of rounds: req/s x${median(rpsRatio).toFixed(3)}, cpu per request x${median(cpuRatio).toFixed(3)}`,
  );
}

import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { chatBody } from './load.js';
import { rssMb } from './procs.js';
import { startStack } from './stack.js';

/**
 * Memory-growth soak: gateway and baseline driven side by side at a steady mixed load (one
 * streaming request for every three non-streaming) for `minutes`, RSS sampled every 5 s.
 * Growth is the least-squares slope over the second half of the run, when heaps have settled.
 */
export async function soak(minutes: number, pg: boolean, built = false) {
  const stack = await startStack({ pg, built });
  const samples: Array<{ t: number; baseline: number; gateway: number; gateway_heap?: number }> = [];
  const rate = 300;
  try {
    const requests = [false, false, false, true].map((stream) => ({
      method: 'POST',
      body: chatBody(stream),
    }));
    const run = (url: string, headers: Record<string, string>) =>
      new Promise<void>((resolve, reject) => {
        autocannon(
          {
            url: `${url}/v1/chat/completions`,
            headers: { 'content-type': 'application/json', ...headers },
            requests,
            connections: 20,
            overallRate: rate,
            duration: minutes * 60,
          },
          (err) => (err ? reject(err) : resolve()),
        );
      });
    const start = Date.now();
    const loads = Promise.all([
      run(stack.baseline!.url, {}),
      run(stack.gateway.url, { authorization: `Bearer ${stack.apiKey}` }),
    ]);
    let finished = false;
    loads.finally(() => {
      finished = true;
    });
    while (!finished) {
      samples.push({
        t: (Date.now() - start) / 1000,
        baseline: rssMb(stack.baseline!.pid),
        gateway: rssMb(stack.gateway.pid),
        gateway_heap: await heapUsedMb(stack.gateway.url),
      });
      const last = samples.at(-1)!;
      process.stderr.write(
        `  soak t=${last.t.toFixed(0)}s RSS baseline ${last.baseline.toFixed(1)} MB gateway ${last.gateway.toFixed(1)} MB (V8 heap used ${last.gateway_heap?.toFixed(1)} MB)\n`,
      );
      await Promise.race([sleep(5000), loads]);
    }
    await loads;
  } finally {
    await stack.close();
  }
  const result = {
    minutes,
    rate_per_process: rate,
    database: stack.database,
    ...soakGrowth(samples),
    rss_first_mb: samples[0],
    rss_last_mb: samples.at(-1),
    samples,
  };
  const f = (k: 'baseline' | 'gateway') =>
    `${k} slope ${result.growth_mb_per_min[k].toFixed(2)} MB/min, per-minute floors ${result.floor_mb_per_minute[k].join(' ')} MB`;
  const heapFloors = perMinuteFloor(
    samples.filter((x) => x.gateway_heap !== undefined),
    (x) => x.gateway_heap!,
  );
  Object.assign(result, { gateway_heap_floor_mb_per_minute: heapFloors });
  process.stdout.write(
    `soak ${minutes} min (second half):\n  ${f('baseline')}\n  ${f('gateway')}\n  gateway V8 heap used, per-minute floors ${heapFloors.join(' ')} MB\n`,
  );
  return result;
}

type Sample = { t: number; baseline: number; gateway: number };

/**
 * RSS swings with garbage collection, so two views: the least-squares slope over the second half
 * (when heaps have settled), and the lowest RSS in each minute, whose trend is the post-GC floor:
 * a leak raises the floors, a sawtooth does not.
 */
export function soakGrowth(samples: Sample[]) {
  const half = samples.slice(Math.floor(samples.length / 2));
  const slope = (k: 'baseline' | 'gateway') => {
    const n = half.length;
    const mt = half.reduce((s, x) => s + x.t, 0) / n;
    const my = half.reduce((s, x) => s + x[k], 0) / n;
    const num = half.reduce((s, x) => s + (x.t - mt) * (x[k] - my), 0);
    const den = half.reduce((s, x) => s + (x.t - mt) ** 2, 0);
    return den ? (num / den) * 60 : 0;
  };
  const floors = (k: 'baseline' | 'gateway') => perMinuteFloor(samples, (x) => x[k]);
  return {
    growth_mb_per_min: { baseline: slope('baseline'), gateway: slope('gateway') },
    floor_mb_per_minute: { baseline: floors('baseline'), gateway: floors('gateway') },
  };
}

/** The lowest value in each minute of the run (a leak raises these; a GC sawtooth does not). */
function perMinuteFloor<T extends { t: number }>(samples: T[], value: (x: T) => number): number[] {
  const byMinute = new Map<number, number>();
  for (const x of samples) {
    const m = Math.floor(x.t / 60);
    byMinute.set(m, Math.min(byMinute.get(m) ?? Number.POSITIVE_INFINITY, value(x)));
  }
  return [...byMinute.values()].map((v) => Math.round(v * 10) / 10);
}

/** The gateway's V8 heap in use, from its own /metrics (prom-client's nodejs_heap_size_used_bytes). */
async function heapUsedMb(base: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
    return m ? Number(m[1]) / 2 ** 20 : undefined;
  } catch {
    return undefined;
  }
}

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
  const samples: Array<{ t: number; baseline: number; gateway: number }> = [];
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
      });
      const last = samples.at(-1)!;
      process.stderr.write(
        `  soak t=${last.t.toFixed(0)}s RSS baseline ${last.baseline.toFixed(1)} MB gateway ${last.gateway.toFixed(1)} MB\n`,
      );
      await Promise.race([sleep(5000), loads]);
    }
    await loads;
  } finally {
    await stack.close();
  }
  const half = samples.slice(Math.floor(samples.length / 2));
  const slope = (k: 'baseline' | 'gateway') => {
    const n = half.length;
    const mt = half.reduce((s, x) => s + x.t, 0) / n;
    const my = half.reduce((s, x) => s + x[k], 0) / n;
    const num = half.reduce((s, x) => s + (x.t - mt) * (x[k] - my), 0);
    const den = half.reduce((s, x) => s + (x.t - mt) ** 2, 0);
    return den ? (num / den) * 60 : 0;
  };
  const result = {
    minutes,
    rate_per_process: rate,
    database: stack.database,
    growth_mb_per_min: { baseline: slope('baseline'), gateway: slope('gateway') },
    rss_first_mb: samples[0],
    rss_last_mb: samples.at(-1),
    samples,
  };
  process.stdout.write(
    `soak ${minutes} min: RSS slope over the second half baseline ${result.growth_mb_per_min.baseline.toFixed(2)} MB/min, gateway ${result.growth_mb_per_min.gateway.toFixed(2)} MB/min\n`,
  );
  return result;
}

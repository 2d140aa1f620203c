import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Metric, Registry } from 'prom-client';

const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const RESOLUTION_MS = 10;

/**
 * `modelgate_event_loop_delay_seconds`: a cumulative histogram of event-loop delay, so a stall
 * (a synchronous database write, a checkpoint, a major GC) shows in `rate()` and quantiles over
 * any window. prom-client's `nodejs_eventloop_lag_*` gauges reset at each scrape and keep only a
 * few percentiles. Sampled natively by perf_hooks (one sample per 10 ms timer tick, no JS
 * wakeups); at each scrape the samples since the last one are added to the buckets (bucket
 * counts read off the HDR histogram's percentile points) and the sampler is reset.
 */
export function registerEventLoopDelay(register: Registry): void {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  const buckets = new Array<number>(BOUNDS.length).fill(0);
  let count = 0;
  let sum = 0;
  const fold = () => {
    const n = h.count;
    if (n === 0) return;
    // percentiles: ascending (percentile, value in ns); the share of samples <= a bound is the
    // highest percentile whose value is within it.
    const points = [...h.percentiles];
    for (let b = 0; b < BOUNDS.length; b++) {
      const limitNs = BOUNDS[b]! * 1e9;
      let share = 0;
      for (const [p, v] of points) if (v <= limitNs) share = p;
      buckets[b]! += Math.round((share / 100) * n);
    }
    count += n;
    sum += (h.mean * n) / 1e9;
    h.reset();
  };
  const name = 'modelgate_event_loop_delay_seconds';
  const bucket = `${name}_bucket`;
  // A histogram prom-client cannot fill in bulk: registered as a plain collector with get().
  const metric = {
    name,
    help: 'Event-loop delay (how late a 10 ms timer fired), cumulative since start',
    type: 'histogram',
    aggregator: 'sum',
    reset() {},
    async get() {
      fold();
      return {
        name,
        help: metric.help,
        type: 'histogram',
        aggregator: 'sum',
        values: [
          ...BOUNDS.map((le, i) => ({ labels: { le }, value: buckets[i]!, metricName: bucket })),
          { labels: { le: '+Inf' }, value: count, metricName: bucket },
          { labels: {}, value: sum, metricName: `${name}_sum` },
          { labels: {}, value: count, metricName: `${name}_count` },
        ],
      };
    },
  };
  register.registerMetric(metric as unknown as Metric);
}

import { describe, expect, it } from 'vitest';
import { HotCounter, HotHistogram } from './hot-metrics.js';

describe('hot metrics', () => {
  it('renders counters in the Prometheus text format, one series per label set, values escaped', () => {
    const c = new HotCounter('t_total', 'Things', ['route', 'status']);
    c.labels({ route: '/a', status: 200 }).inc();
    c.labels({ route: '/a', status: 200 }).inc(2);
    c.labels({ route: 'say "hi"\\', status: 500 }).inc(0.5);
    expect(c.render()).toBe(
      '# HELP t_total Things\n# TYPE t_total counter\n' +
        't_total{route="/a",status="200"} 3\n' +
        't_total{route="say \\"hi\\"\\\\",status="500"} 0.5\n',
    );
  });

  it('renders histograms with cumulative buckets, +Inf, sum and count', () => {
    const h = new HotHistogram('d_seconds', 'Durations', ['m'], [0.1, 1]);
    const s = h.labels({ m: 'x' });
    for (const v of [0.05, 0.1, 0.5, 3, Number.NaN]) s.observe(v);
    expect(h.render()).toBe(
      '# HELP d_seconds Durations\n# TYPE d_seconds histogram\n' +
        'd_seconds_bucket{m="x",le="0.1"} 2\n' +
        'd_seconds_bucket{m="x",le="1"} 3\n' +
        'd_seconds_bucket{m="x",le="+Inf"} 4\n' +
        'd_seconds_sum{m="x"} 3.65\n' +
        'd_seconds_count{m="x"} 4\n',
    );
  });
});

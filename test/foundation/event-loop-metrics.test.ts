import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
});
afterAll(async () => gw?.close());

const sample = (text: string, line: string) => {
  const m = new RegExp(`^${line.replace(/[{}+.]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

describe('/metrics event-loop delay', () => {
  it('a blocked event loop shows in the cumulative histogram', async () => {
    const before = (await gw.call('GET', '/metrics')).body as string;
    expect(before).toMatch(/^# TYPE modelgate_event_loop_delay_seconds histogram$/m);
    const slowBefore = sample(before, 'modelgate_event_loop_delay_seconds_bucket{le="0.05"}')!;
    const allBefore = sample(before, 'modelgate_event_loop_delay_seconds_bucket{le="+Inf"}')!;
    const until = Date.now() + 80;
    while (Date.now() < until); // a synchronous stall of 80 ms
    await new Promise((r) => setTimeout(r, 30));
    const after = (await gw.call('GET', '/metrics')).body as string;
    const slowAfter = sample(after, 'modelgate_event_loop_delay_seconds_bucket{le="0.05"}')!;
    const allAfter = sample(after, 'modelgate_event_loop_delay_seconds_bucket{le="+Inf"}')!;
    // At least one sample beyond 50 ms was added, and the buckets stay cumulative.
    expect(allAfter - allBefore).toBeGreaterThan(slowAfter - slowBefore);
    expect(slowAfter).toBeGreaterThanOrEqual(slowBefore);
    expect(sample(after, 'modelgate_event_loop_delay_seconds_count')).toBe(allAfter);
    expect(sample(after, 'modelgate_event_loop_delay_seconds_sum')).toBeGreaterThan(0.05);
  });
});

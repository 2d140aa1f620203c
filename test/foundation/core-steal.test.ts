import { describe, expect, it } from 'vitest';
import { parseCoreTimes, stealPct } from '../../bench/procs.js';

// The full bench records the hypervisor's steal per paced round (rounds_steal_pct_proxy_load) from
// /proc/stat: the reading that tells a round that measured the host from one that measured us.
const STAT = (steal0: number, idle0: number) => `cpu  9000 0 3000 20000 100 0 500 ${steal0 + 40} 0 0
cpu0 4000 0 1500 ${idle0} 50 0 300 ${steal0} 0 0
cpu10 1 1 1 1 1 1 1 999 0 0
cpu1 5000 0 1500 10000 50 0 200 40 0 0
intr 123456 0 0
ctxt 999
`;

describe('core steal from /proc/stat', () => {
  it("reads one core's line, not the total nor a core whose number starts the same", () => {
    expect(parseCoreTimes(STAT(30, 10000), '0')).toEqual({
      total: 4000 + 1500 + 10000 + 50 + 300 + 30,
      steal: 30,
    });
    expect(parseCoreTimes(STAT(30, 10000), '1')).toEqual({ total: 16790, steal: 40 });
    expect(parseCoreTimes(STAT(30, 10000), '10')?.steal).toBe(999);
    expect(parseCoreTimes(STAT(30, 10000), '2')).toBeUndefined();
  });

  it('is the stolen share of the time that passed between two readings', () => {
    const a = parseCoreTimes(STAT(30, 10000), '0');
    // 100 ticks passed on core 0: 96 idle, 4 stolen.
    const b = parseCoreTimes(STAT(34, 10096), '0');
    expect(stealPct(a, b)).toBeCloseTo(4, 10);
    expect(stealPct(a, a)).toBeUndefined();
    expect(stealPct(undefined, b)).toBeUndefined();
  });
});

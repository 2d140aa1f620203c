import { describe, expect, it } from 'vitest';
import { runnableWaits, summarize } from '../../bench/wakeups.js';

// bench/wakeups.ts reads the scheduler's record of the proxies' core: how long a proxy's main
// thread was runnable without running, and who had the core meanwhile (docs/performance.md,
// session 34). Lines as `perf script -F cpu,time,event,trace` prints them.
const sw = (t: string, prev: string, prevPid: number, state: string, next: string, nextPid: number) =>
  `[000] ${t}: sched:sched_switch: prev_comm=${prev} prev_pid=${prevPid} prev_prio=120 prev_state=${state} ==> next_comm=${next} next_pid=${nextPid} next_prio=120`;
const wake = (t: string, comm: string, pid: number) =>
  `[000] ${t}: sched:sched_wakeup: comm=${comm} pid=${pid} prio=120 target_cpu=000`;

describe('wakeups: how long a thread waited for its core, and who had it', () => {
  it('times a wake-up to the switch-in and charges whoever ran meanwhile', () => {
    const lines = [
      sw('10.000000', 'node', 100, 'S', 'postgres', 7), // the proxy sleeps; a backend runs
      wake('10.001000', 'node', 100), // a request arrives: runnable from here
      sw('10.002500', 'postgres', 7, 'S', 'node', 101), // its own GC worker runs next
      sw('10.003000', 'node', 101, 'S', 'node', 100), // then the proxy: waited 2 ms
    ];
    const waits = runnableWaits(lines, 100, new Set([101]));
    expect(waits).toHaveLength(1);
    expect(waits[0]!.ms).toBeCloseTo(2, 6);
    expect(waits[0]!.ran.postgres).toBeCloseTo(1.5, 6); // from the wake-up, not from 10.000
    expect(waits[0]!.ran['own thread 101']).toBeCloseTo(0.5, 6);
  });

  it('counts a preemption as a wait, and not a sleep', () => {
    const lines = [
      sw('5.000000', 'node', 100, 'R', 'kdamond.0', 77), // preempted while runnable
      sw('5.001200', 'kdamond.0', 77, 'S', 'node', 100),
      sw('5.002000', 'node', 100, 'S', 'swapper/0', 0), // asleep: no wait
      sw('5.010000', 'swapper/0', 0, 'R', 'node', 100), // ran again without a wake-up seen
      sw('5.011000', 'node', 100, 'R+', 'beam.smp', 9), // preempted again
      wake('5.011500', 'node', 100), // a wake-up while already waiting changes nothing
      sw('5.012000', 'beam.smp', 9, 'S', 'node', 100),
    ];
    const waits = runnableWaits(lines, 100, new Set());
    expect(waits.map((w) => Number(w.ms.toFixed(3)))).toEqual([1.2, 1]);
    expect(waits[0]!.ran['kdamond.0']).toBeCloseTo(1.2, 6);
    expect(waits[1]!.ran['beam.smp']).toBeCloseTo(1, 6);
  });

  it('names the idle task and ignores other threads and cores', () => {
    const lines = [
      wake('1.000000', 'node', 100),
      wake('1.000100', 'node', 555), // another process's wake-up
      sw('1.000300', 'swapper/0', 0, 'R', 'node', 100), // the core was idle: a wake-up latency
      'some other line perf printed',
    ];
    const waits = runnableWaits(lines, 100, new Set());
    expect(waits).toHaveLength(1);
    expect(waits[0]!.ms).toBeCloseTo(0.3, 6);
  });

  it('sums who ran over the waits longer than a threshold, the most first', () => {
    const s = summarize(
      [
        { ms: 0.4, ran: { postgres: 0.4 } },
        { ms: 2, ran: { postgres: 1.5, 'own thread 101': 0.5 } },
        { ms: 1, ran: { 'own thread 101': 1 } },
      ],
      0.5,
    );
    expect(s.count).toBe(2);
    expect(s.ran).toEqual([
      ['postgres', 1.5],
      ['own thread 101', 1.5],
    ]);
  });
});

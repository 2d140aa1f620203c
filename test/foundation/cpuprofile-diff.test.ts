import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { perRequestDiff, readReport } from '../../bench/cpuprofile-diff.js';
import { type Profile, tally } from '../../bench/cpuprofile-top.js';

// bench/cpuprofile-diff.ts compares two --profile reports per request (docs/performance.md,
// session 50); a profile's window must leave out the process's shutdown after the load.
describe('cpuprofile-diff: two profiles per request', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'mg-cpudiff-'));
    dirs.push(d);
    return d;
  };

  /** A profile of `work` ms, then `shutdown` ms in `close`, one sample a millisecond. */
  function profile(file: string, work: number, shutdown: number): void {
    const frame = (id: number, functionName: string) => ({
      id,
      callFrame: { functionName, url: '', lineNumber: 0 },
    });
    const prof: Profile = {
      nodes: [{ ...frame(1, '(root)'), children: [2, 3] }, frame(2, 'handle'), frame(3, 'close')],
      samples: [...Array(work).fill(2), ...Array(shutdown).fill(3)],
      timeDeltas: Array(work + shutdown).fill(1000),
      startTime: 0,
      endTime: (work + shutdown) * 1000,
    };
    writeFileSync(file, JSON.stringify(prof));
  }

  it('leaves the shutdown after the window out', () => {
    const f = join(dir(), 'a.cpuprofile');
    profile(f, 1000, 200);
    const whole = tally(f, 1000);
    expect(whole.self.get('close  :1')).toBeGreaterThan(150);
    const measured = tally(f, 1000, 200);
    expect(measured.self.get('close  :1') ?? 0).toBeLessThanOrEqual(1);
    expect(measured.totalMs).toBeGreaterThan(990);
    expect(measured.totalMs).toBeLessThanOrEqual(1001);
  });

  it('reads a report, with and without the shutdown, and divides by requests served', () => {
    const d = dir();
    writeFileSync(
      join(d, 'new.txt'),
      'profile: /tmp/x.cpuprofile\ngateway, last 12.1 s before shutdown (0.18 s): 68868 requests, 155.6 µs\n',
    );
    writeFileSync(
      join(d, 'old.txt'),
      'profile: /tmp/y.cpuprofile\nbaseline, last 10.1 s: 73635 requests, 109.0 µs\n',
    );
    writeFileSync(join(d, 'bad.txt'), 'hello\n');
    expect(readReport(join(d, 'new.txt'))).toEqual({
      file: '/tmp/x.cpuprofile',
      label: 'gateway',
      windowMs: 12100,
      skipMs: 180,
      requests: 68868,
    });
    expect(readReport(join(d, 'old.txt'))).toMatchObject({ label: 'baseline', windowMs: 10100, skipMs: 0 });
    expect(() => readReport(join(d, 'bad.txt'))).toThrow(/not a --profile report/);

    const rows = perRequestDiff(
      new Map([
        ['a', 100],
        ['b', 10],
      ]),
      1000,
      new Map([
        ['a', 50],
        ['c', 40],
      ]),
      2000,
    );
    // ms over requests, in µs per request; largest difference first.
    expect(rows).toEqual([
      { name: 'a', a: 100, b: 25 },
      { name: 'b', a: 10, b: 0 },
      { name: 'c', a: 0, b: 20 },
    ]);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readRounds, type SlowRound, slowPerSlice } from '../../bench/slow-slices.js';

// bench/slow-slices.ts counts the slow paced requests of a BENCH_SLOW_DIR per target and slice:
// the counts docs/performance.md reads the first paced round's tail from (session 33).
describe('slow-slices: slow paced requests per slice', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("puts each request in its own target's slice that was running when it was sent", () => {
    const round: SlowRound = {
      targets: ['upstream', 'baseline', 'gateway'],
      // Slices of 1 s in turn: upstream 0, baseline 1000, gateway 2000, upstream 3000, ...
      starts: [
        [0, 0],
        [1, 1000],
        [2, 2000],
        [0, 3000],
        [1, 4000],
        [2, 5000],
      ],
      slow: [
        [2, 2000, 5, 1], // the gateway's first slice, at its very start
        [2, 2999, 5, 1],
        [2, 5500, 5, 1], // its second slice
        [0, 3100, 5, 1], // the upstream's second slice
        [1, 999, 5, 1], // sent before the baseline's first slice: in none of its slices
        [1, 4999, 5, 1],
      ],
    };
    expect(slowPerSlice(round)).toEqual([
      [0, 1],
      [0, 1],
      [2, 1],
    ]);
  });

  it("reads a directory's round files in the order they were written, warm-up first", () => {
    const dir = mkdtempSync(join(tmpdir(), 'slow-slices-'));
    dirs.push(dir);
    const round = (n: number): SlowRound => ({
      targets: ['gateway'],
      starts: [[0, 0]],
      slow: [[0, 1, n, 1]],
    });
    // 999... sorts after 1000... as text; the timestamps order them.
    writeFileSync(join(dir, 'slow-1000-7.json'), JSON.stringify(round(2)));
    writeFileSync(join(dir, 'slow-999-7.json'), JSON.stringify(round(1)));
    writeFileSync(join(dir, 'other.json'), '{}');
    const rounds = readRounds(dir);
    expect(rounds.map((r) => r.file)).toEqual(['slow-999-7.json', 'slow-1000-7.json']);
    expect(rounds.map((r) => r.round.slow[0]![2])).toEqual([1, 2]);
  });
});

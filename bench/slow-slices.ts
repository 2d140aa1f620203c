import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SlowRequest } from './load.js';

/**
 * Where a run's slow paced requests fell: reads the files `BENCH_SLOW_DIR` collects (one per
 * interleaved round, the warm-up round first: `{ targets, slow: [target, sentMs, ms, reused][],
 * starts: [target, startMs][] }`) and prints, per round and target, how many requests over
 * `BENCH_SLOW_MS` each of its slices held, in order. A count high in one target's slices and low
 * in the other targets' slices between them is that target's own; high in all of them at once is
 * the machine (session 33: the gateway's first three slices of round 1).
 * Usage: node --import tsx bench/slow-slices.ts <dir>
 */
export interface SlowRound {
  targets: string[];
  slow: SlowRequest[];
  starts: Array<[number, number]>;
}

/** For each target (in `targets` order), the number of slow requests in each of its slices. */
export function slowPerSlice(r: SlowRound): number[][] {
  const perTarget = r.targets.map(() => [] as number[]);
  // Slice i of the round is its target's nth[i]-th.
  const nth = r.starts.map(([k]) => perTarget[k]!.push(0) - 1);
  for (const [k, sent] of r.slow) {
    // The last slice of this target that started at or before the request was sent.
    let at = -1;
    for (let i = 0; i < r.starts.length; i++) if (r.starts[i]![0] === k && r.starts[i]![1] <= sent) at = i;
    if (at >= 0) perTarget[k]![nth[at]!]!++;
  }
  return perTarget;
}

/** The round files of a `BENCH_SLOW_DIR`, oldest first (their names start with a timestamp). */
export function readRounds(dir: string): Array<{ file: string; round: SlowRound }> {
  return readdirSync(dir)
    .filter((f) => /^slow-\d+-\d+\.json$/.test(f))
    .sort((a, b) => Number(a.split('-')[1]) - Number(b.split('-')[1]))
    .map((file) => ({ file, round: JSON.parse(readFileSync(join(dir, file), 'utf8')) as SlowRound }));
}

if (process.argv[1] && import.meta.url.split('?')[0] === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: node --import tsx bench/slow-slices.ts <BENCH_SLOW_DIR>\n');
    process.exit(2);
  }
  const rounds = readRounds(dir);
  if (rounds.length === 0) process.stderr.write(`no slow-*.json files in ${dir}\n`);
  rounds.forEach(({ file, round }, i) => {
    process.stdout.write(`${i === 0 ? 'warm-up round' : `round ${i}`} (${file}): slow requests per slice\n`);
    const counts = slowPerSlice(round);
    round.targets.forEach((name, k) => {
      process.stdout.write(`  ${name.padEnd(10)} ${counts[k]!.join(' ')}\n`);
    });
  });
}

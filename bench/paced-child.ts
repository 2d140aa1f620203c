import { interleavedHere, type LoadResult, type PacedTarget, pacedHere, type Target } from './load.js';

/**
 * The paced load generator in a process of its own (see `paced()`, `interleaved()` and
 * `PacedGenerator` in load.ts). One run: its arguments as one JSON argument, its result as JSON
 * on stdout. `--serve` (PacedGenerator): interleaved rounds asked for over IPC, one at a time,
 * each target's pool kept across rounds, until the parent disconnects.
 */
type Round = { targets: Target[]; rate: number; sliceSeconds: number; slices: number };
if (process.argv[2] === '--serve') {
  const pools = new Map<string, PacedTarget>();
  process.on('message', (r: Round) => {
    void interleavedHere(r.targets, r.rate, r.sliceSeconds, r.slices, pools).then((results) =>
      process.send!({ results }),
    );
  });
  // The parent closed the generator or died: stop, even mid-round (nobody reads its result).
  process.once('disconnect', () => {
    for (const g of pools.values()) g.close();
    process.exit(0);
  });
} else {
  const arg = JSON.parse(process.argv[2] ?? '{}') as
    | { t: Target; rate: number; seconds: number; samples: boolean }
    | Round;
  if ('targets' in arg) {
    const results = await interleavedHere(arg.targets, arg.rate, arg.sliceSeconds, arg.slices);
    process.stdout.write(JSON.stringify({ results }));
  } else {
    const samples: Array<[number, number, number]> | undefined = arg.samples ? [] : undefined;
    const result: LoadResult = await pacedHere(arg.t, arg.rate, arg.seconds, samples);
    process.stdout.write(JSON.stringify({ result, samples }));
  }
}

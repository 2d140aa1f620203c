import { interleavedHere, type LoadResult, pacedHere, type Target } from './load.js';

/**
 * The paced load generator in a process of its own (see `paced()` and `interleaved()` in
 * load.ts): one run, its arguments as one JSON argument, its result as JSON on stdout.
 */
const arg = JSON.parse(process.argv[2] ?? '{}') as
  | { t: Target; rate: number; seconds: number; samples: boolean }
  | { targets: Target[]; rate: number; sliceSeconds: number; slices: number };
if ('targets' in arg) {
  const results = await interleavedHere(arg.targets, arg.rate, arg.sliceSeconds, arg.slices);
  process.stdout.write(JSON.stringify({ results }));
} else {
  const samples: Array<[number, number, number]> | undefined = arg.samples ? [] : undefined;
  const result: LoadResult = await pacedHere(arg.t, arg.rate, arg.seconds, samples);
  process.stdout.write(JSON.stringify({ result, samples }));
}

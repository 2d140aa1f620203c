import { type LoadResult, pacedHere, type Target } from './load.js';

/**
 * The paced load generator in a process of its own (see `paced()` in load.ts): one run, its
 * arguments as one JSON argument, its result as JSON on stdout.
 */
const arg = JSON.parse(process.argv[2] ?? '{}') as {
  t: Target;
  rate: number;
  seconds: number;
  samples: boolean;
};
const samples: Array<[number, number, number]> | undefined = arg.samples ? [] : undefined;
const result: LoadResult = await pacedHere(arg.t, arg.rate, arg.seconds, samples);
process.stdout.write(JSON.stringify({ result, samples }));

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { type Tally, tally } from './cpuprofile-top.js';

/**
 * What one process spends per request that another does not: two `--profile` reports (the
 * gateway's and the baseline's, `bench/results/profile-*-latest.txt`), each naming its
 * .cpuprofile, its measured window and the requests served in it, compared in µs of sampled CPU
 * per request, by area and by function, largest difference first (idle left out).
 *
 * Usage: node --import tsx bench/cpuprofile-diff.ts <report A> <report B> [rows]
 * e.g. after `npm run bench -- --profile 12 --no-build --scenarios throughput` and the same with
 * `--profile-baseline`:
 *   node --import tsx bench/cpuprofile-diff.ts bench/results/profile-sqlite-nonstream-latest.txt \
 *     bench/results/profile-baseline-sqlite-nonstream-latest.txt
 * The .cpuprofile files are in the system's temporary folder; a report whose file is gone says so.
 */
export interface Report {
  file: string;
  label: string;
  windowMs: number;
  /** The process's shutdown at the profile's end, left out (0 in reports before session 50). */
  skipMs: number;
  requests: number;
}

/**
 * Reads a report's first two lines: `profile: <file>` and
 * `<label>, last <s> s before shutdown (<s> s): <n> requests, …`.
 */
export function readReport(path: string): Report {
  const [first = '', second = ''] = readFileSync(path, 'utf8').split('\n', 2);
  const file = /^profile: (.+)$/.exec(first)?.[1];
  const m = /^(.+), last ([\d.]+) s(?: before shutdown \(([\d.]+) s\))?: (\d+) requests/.exec(second);
  if (!file || !m)
    throw new Error(`${path}: not a --profile report (its first two lines name the profile and requests)`);
  return {
    file,
    label: m[1]!,
    windowMs: Number(m[2]) * 1000,
    skipMs: Number(m[3] ?? 0) * 1000,
    requests: Number(m[4]),
  };
}

export interface DiffRow {
  name: string;
  a: number;
  b: number;
}

/** µs per request of each key in either tally, A's and B's, largest A - B first. */
export function perRequestDiff(
  a: Map<string, number>,
  na: number,
  b: Map<string, number>,
  nb: number,
): DiffRow[] {
  const names = new Set([...a.keys(), ...b.keys()]);
  return [...names]
    .map((name) => ({ name, a: ((a.get(name) ?? 0) * 1000) / na, b: ((b.get(name) ?? 0) * 1000) / nb }))
    .sort((x, y) => y.a - y.b - (x.a - x.b));
}

function format(title: string, la: string, lb: string, rows: DiffRow[], n: number): string {
  const num = (v: number) => v.toFixed(2).padStart(8);
  const shown = [...rows.slice(0, n), ...rows.slice(Math.max(n, rows.length - 5))];
  const lines = shown.map((r) => `${num(r.a)} ${num(r.b)} ${num(r.a - r.b)}  ${r.name}`);
  return `${title} (µs per request: ${la}, ${lb}, difference)\n${lines.join('\n')}\n`;
}

if (process.argv[1] && import.meta.url.split('?')[0] === pathToFileURL(process.argv[1]).href) {
  const [pa, pb, rowsArg] = process.argv.slice(2);
  if (!pa || !pb) {
    process.stderr.write(
      'usage: node --import tsx bench/cpuprofile-diff.ts <profile report A> <profile report B> [rows]\n',
    );
    process.exit(2);
  }
  const [ra, rb] = [readReport(pa), readReport(pb)];
  let ta: Tally;
  let tb: Tally;
  try {
    ta = tally(ra.file, ra.windowMs, ra.skipMs);
    tb = tally(rb.file, rb.windowMs, rb.skipMs);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n(the profiles named by the reports must still exist)\n`);
    process.exit(1);
  }
  const rows = Number(rowsArg) > 0 ? Number(rowsArg) : 40;
  const total = (t: Tally, r: Report) => ((t.totalMs * 1000) / r.requests).toFixed(1);
  process.stdout.write(
    `${ra.label}: ${ra.requests} requests, ${total(ta, ra)} µs of sampled CPU per request\n` +
      `${rb.label}: ${rb.requests} requests, ${total(tb, rb)} µs of sampled CPU per request\n\n` +
      format(
        'self time by area',
        ra.label,
        rb.label,
        perRequestDiff(ta.areas, ra.requests, tb.areas, rb.requests),
        25,
      ) +
      '\n' +
      format(
        'self time by function',
        ra.label,
        rb.label,
        perRequestDiff(ta.self, ra.requests, tb.self, rb.requests),
        rows,
      ),
  );
}

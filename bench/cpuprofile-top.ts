import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './procs.js';

/**
 * Summarizes a V8 .cpuprofile: self time by function, self time by area (our src/ folders,
 * each node_modules package, node internals, GC), and inclusive time of our own functions.
 * Usage: node --import tsx bench/cpuprofile-top.ts <file.cpuprofile> [rows] [--callers <name>]
 * --last-ms <ms> keeps only the profile's last milliseconds, leaving start-up out;
 * --callers prints the stacks, 6 frames up, that lead to functions whose name contains <name>).
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Row {
  name: string;
  ms: number;
  share: number;
}

const rootUrl = pathToFileURL(ROOT).href;

export function where(url: string): string {
  if (!url) return '';
  if (url.startsWith('node:')) return url;
  const p = url.startsWith(rootUrl) ? relative(ROOT, new URL(url).pathname) : url;
  // Compiled by `bench --build` or `npm run build` (dist/): name the source file (tsc keeps line
  // numbers close).
  return p
    .replace(/^bench\/results\/build\.tmp\/(.*)\.js$/, '$1.ts')
    .replace(/^dist\/(src\/.*)\.js$/, '$1.ts');
}

export function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const p = where(url);
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(p);
  if (nm) return nm[1]!;
  const src = /^src\/([^/]+(?:\/[^/]+)?)\//.exec(p);
  if (src) return `src/${src[1]}`;
  return p;
}

/** Self time by function and by area, and inclusive time of our own functions, in ms. */
export interface Tally {
  self: Map<string, number>;
  areas: Map<string, number>;
  inclusive: Map<string, number>;
  totalMs: number;
}

/**
 * The measured part of a profile in its own clock (µs): the `lastMs` before its last
 * `skipLastMs` (the process's shutdown after the load, which `--cpu-prof` records too).
 */
export function profileWindow(
  prof: Profile,
  lastMs = Number.POSITIVE_INFINITY,
  skipLastMs = 0,
): [number, number] {
  const to = prof.endTime - skipLastMs * 1000;
  return [to - lastMs * 1000, to];
}

/** Every sample of a profile's window (see `profileWindow`), idle left out. */
export function tally(file: string, lastMs = Number.POSITIVE_INFINITY, skipLastMs = 0): Tally {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const [from, to] = profileWindow(prof, lastMs, skipLastMs);
  let at = prof.startTime;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n: Node) =>
    `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = (prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0) / 1000;
    at += prof.timeDeltas[i] ?? 0;
    const n = byId.get(prof.samples[i]!)!;
    if (n.callFrame.functionName === '(idle)' || at < from || at > to) continue;
    total += dt;
    const k = key(n);
    self.set(k, (self.get(k) ?? 0) + dt);
    const a = area(n.callFrame.url, n.callFrame.functionName);
    areas.set(a, (areas.get(a) ?? 0) + dt);
    // Inclusive time of our own code: every src/ function on the stack, once per sample.
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!;
      if (!where(f.callFrame.url).startsWith('src/')) continue;
      const fk = key(f);
      if (seen.has(fk)) continue;
      seen.add(fk);
      inclusive.set(fk, (inclusive.get(fk) ?? 0) + dt);
    }
  }
  return { self, areas, inclusive, totalMs: total };
}

export function summarize(
  file: string,
  rows = 25,
  /** Only the samples of the profile's last `lastMs` (leaves start-up and warm-up out). */
  lastMs = Number.POSITIVE_INFINITY,
  /** Leaves the profile's last `skipLastMs` out (the shutdown after the load). */
  skipLastMs = 0,
): { self: Row[]; areas: Row[]; inclusive: Row[]; totalMs: number } {
  const t = tally(file, lastMs, skipLastMs);
  const top = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, rows)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), share: Math.round((ms / t.totalMs) * 1000) / 10 }));
  return {
    self: top(t.self),
    areas: top(t.areas),
    inclusive: top(t.inclusive),
    totalMs: Math.round(t.totalMs),
  };
}

export function formatSummary(s: ReturnType<typeof summarize>): string {
  const fmt = (title: string, rows: Row[]) =>
    `${title}\n${rows.map((r) => `  ${r.share.toFixed(1).padStart(5)}%  ${String(r.ms).padStart(6)} ms  ${r.name}`).join('\n')}\n`;
  return [
    `busy CPU time sampled: ${s.totalMs} ms (idle excluded)\n`,
    fmt('self time by area', s.areas),
    fmt('self time by function', s.self),
    fmt('inclusive time of src/ functions', s.inclusive),
  ].join('\n');
}

export function callers(file: string, name: string, rows = 12): Row[] {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stacks = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = (prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0) / 1000;
    const n = byId.get(prof.samples[i]!)!;
    if (n.callFrame.functionName === '(idle)') continue;
    total += dt;
    if (!n.callFrame.functionName.includes(name)) continue;
    const frames: string[] = [];
    for (let id = parent.get(n.id); id !== undefined && frames.length < 6; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      frames.push(`${f.functionName || '(anonymous)'}@${where(f.url).replace(/^.*node_modules\//, '')}`);
    }
    const k = `${n.callFrame.functionName} <- ${frames.join(' <- ')}`;
    stacks.set(k, (stacks.get(k) ?? 0) + dt);
  }
  return [...stacks.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .map(([k, ms]) => ({ name: k, ms: Math.round(ms), share: Math.round((ms / total) * 1000) / 10 }));
}

if (process.argv[1] && import.meta.url.split('?')[0] === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/cpuprofile-top.ts <file.cpuprofile> [rows]\n');
    process.exit(2);
  }
  const c = process.argv.indexOf('--callers');
  if (c > 0) {
    for (const r of callers(file, process.argv[c + 1] ?? ''))
      process.stdout.write(`${r.share.toFixed(1).padStart(5)}%  ${String(r.ms).padStart(6)} ms  ${r.name}\n`);
  } else {
    const rows = Number(process.argv[3]);
    const l = process.argv.indexOf('--last-ms');
    const last = l > 0 ? Number(process.argv[l + 1]) : Number.POSITIVE_INFINITY;
    process.stdout.write(formatSummary(summarize(file, Number.isFinite(rows) && rows > 0 ? rows : 25, last)));
  }
}

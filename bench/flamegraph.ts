import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { area, type Profile, profileWindow, where } from './cpuprofile-top.js';

/**
 * A flame graph of a V8 .cpuprofile as one self-contained SVG (no script, no fonts fetched): each
 * box is a function on the call stack, its width the CPU time sampled with it on the stack, its
 * children above it; hover a box for its name, file, time and share. Idle samples are left out.
 * Colours by area: our own code (src/) orange, node_modules green, Node's internals blue, V8's
 * native work, the garbage collector and '(program)' grey. Also the folded stacks
 * ("a;b;c <µs>" lines, the input of Brendan Gregg's flamegraph.pl, speedscope and others).
 * Usage: node --import tsx bench/flamegraph.ts <file.cpuprofile> <out.svg> [--last-ms <ms>]
 *   [--folded <out.txt>] [--title <text>]
 */

interface Frame {
  name: string;
  file: string;
  area: string;
  /** Sampled µs with this frame on the stack (inclusive) and at the top (self). */
  total: number;
  self: number;
  children: Frame[];
}

/** The profile's call tree with sampled time, its window only (`profileWindow`), idle samples dropped. */
export function callTree(prof: Profile, lastMs = Number.POSITIVE_INFINITY, skipLastMs = 0): Frame {
  const [from, to] = profileWindow(prof, lastMs, skipLastMs);
  const selfUs = new Map<number, number>();
  let at = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    at += prof.timeDeltas[i] ?? 0;
    if (at < from || at > to) continue;
    // A sample's weight is the time until the next one (the last sample: the interval before it).
    const dt = prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0;
    const id = prof.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  }
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const childIds = new Set(prof.nodes.flatMap((n) => n.children ?? []));
  const rootNode = prof.nodes.find((n) => !childIds.has(n.id));
  if (!rootNode) throw new Error('profile has no root node');
  const build = (id: number): Frame | undefined => {
    const n = byId.get(id)!;
    const fn = n.callFrame.functionName || '(anonymous)';
    if (fn === '(idle)') return undefined;
    const children = (n.children ?? [])
      .map(build)
      .filter((c): c is Frame => c !== undefined && c.total > 0)
      .sort((a, b) => b.total - a.total);
    const self = selfUs.get(id) ?? 0;
    const file = where(n.callFrame.url);
    return {
      name: fn,
      file: file ? `${file}:${n.callFrame.lineNumber + 1}` : '',
      area: area(n.callFrame.url, fn),
      self,
      total: self + children.reduce((s, c) => s + c.total, 0),
      children,
    };
  };
  const root = build(rootNode.id)!;
  root.name = 'all';
  return root;
}

/** "frame;frame;frame <µs>" per distinct stack with self time, root left out. */
export function folded(root: Frame): string {
  const lines: string[] = [];
  const walk = (f: Frame, path: string) => {
    const here = path ? `${path};${label(f)}` : label(f);
    if (f.self > 0) lines.push(`${here} ${Math.round(f.self)}`);
    for (const c of f.children) walk(c, here);
  };
  for (const c of root.children) walk(c, '');
  return `${lines.join('\n')}\n`;
}

function label(f: Frame): string {
  // Folded stacks split frames on ';' and the count off at the last space.
  return `${f.name} ${f.file}`.trim().replaceAll(';', ',');
}

const WIDTH = 1200;
const ROW = 17;
const PAD = 10;
const CHAR = 6.6; // the width of one character of 11px monospace, near enough to fit labels
const MIN_WIDTH = 0.3; // boxes narrower than this many pixels are not drawn

function colour(f: Frame): string {
  // A stable shade per function, so the same function looks the same in every graph.
  let h = 0;
  for (let i = 0; i < f.name.length; i++) h = (h * 31 + f.name.charCodeAt(i)) >>> 0;
  const v = h % 40;
  if (f.area.startsWith('src/') || f.area.startsWith('bench/')) return `rgb(240,${120 + v},${40 + (v >> 1)})`;
  if (f.area === 'node internals') return `rgb(${90 + v},${150 + v},225)`;
  if (f.area.startsWith('(') || f.area === 'all') return `rgb(${170 + v},${170 + v},${170 + v})`;
  return `rgb(${80 + v},${185 + (v >> 1)},${80 + v})`;
}

const esc = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

export function flameSvg(root: Frame, title: string): string {
  const scale = root.total > 0 ? (WIDTH - 2 * PAD) / root.total : 0;
  const drawn = (f: Frame) => f.total * scale >= MIN_WIDTH;
  const depthOf = (f: Frame): number =>
    1 + f.children.filter(drawn).reduce((d, c) => Math.max(d, depthOf(c)), 0);
  const height = (depthOf(root) + 2) * ROW + 2 * PAD;
  const boxes: string[] = [];
  // Level 0 (the root) sits on the bottom edge; callees stack upwards.
  const place = (f: Frame, x: number, level: number) => {
    if (!drawn(f)) return;
    boxes.push(box(f, x, height - PAD - (level + 1) * ROW, f.total * scale, root.total));
    let cx = x;
    for (const c of f.children) {
      place(c, cx, level + 1);
      cx += c.total * scale;
    }
  };
  place(root, PAD, 0);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="monospace" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fdfdf6"/>`,
    `<text x="${WIDTH / 2}" y="${PAD + 12}" text-anchor="middle" font-size="14">${esc(title)}</text>`,
    `<text x="${WIDTH - PAD}" y="${PAD + 28}" text-anchor="end" fill="#555">${(root.total / 1000).toFixed(0)} ms sampled; hover a box for details</text>`,
    ...boxes,
    `</svg>`,
    '',
  ].join('\n');
}

function box(f: Frame, x: number, y: number, w: number, total: number): string {
  const share = total > 0 ? (100 * f.total) / total : 0;
  const tip = `${f.name}${f.file ? ` (${f.file})` : ''}: ${(f.total / 1000).toFixed(1)} ms, ${share.toFixed(2)}% (self ${(f.self / 1000).toFixed(1)} ms)`;
  const fits = Math.floor((w - 4) / CHAR);
  const text =
    fits >= 3
      ? `<text x="${(x + 2).toFixed(1)}" y="${(y + ROW - 5).toFixed(1)}">${esc(f.name.length > fits ? `${f.name.slice(0, fits - 2)}..` : f.name)}</text>`
      : '';
  return `<g><title>${esc(tip)}</title><rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${ROW - 1}" fill="${colour(f)}" rx="1"/>${text}</g>`;
}

/** Writes the SVG (and, when asked, the folded stacks) of one profile's last `lastMs`. */
export function writeFlame(
  profileFile: string,
  svgFile: string,
  o: { lastMs?: number; skipLastMs?: number; title?: string; foldedFile?: string } = {},
): void {
  const prof = JSON.parse(readFileSync(profileFile, 'utf8')) as Profile;
  const root = callTree(prof, o.lastMs, o.skipLastMs);
  writeFileSync(svgFile, flameSvg(root, o.title ?? 'CPU flame graph'));
  if (o.foldedFile) writeFileSync(o.foldedFile, folded(root));
}

if (process.argv[1] && import.meta.url.split('?')[0] === pathToFileURL(process.argv[1]).href) {
  const [file, out] = process.argv.slice(2);
  if (!file || !out) {
    process.stderr.write(
      'usage: node --import tsx bench/flamegraph.ts <file.cpuprofile> <out.svg> [--last-ms <ms>] [--folded <out.txt>] [--title <text>]\n',
    );
    process.exit(2);
  }
  const opt = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const last = opt('--last-ms');
  writeFlame(file, out, {
    lastMs: last === undefined ? undefined : Number(last),
    title: opt('--title'),
    foldedFile: opt('--folded'),
  });
}

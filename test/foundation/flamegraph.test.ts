import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Profile } from '../../bench/cpuprofile-top.js';
import { callTree, flameSvg, folded } from '../../bench/flamegraph.js';
import { ROOT } from '../../bench/procs.js';

const inRepo = (path: string) => pathToFileURL(join(ROOT, path)).href;

// The bench's flame graphs (`npm run bench -- --profile`): a synthetic V8 profile with a known
// call tree and known sample times, so every figure in the graph can be checked.
const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });
const profile: Profile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 5, 6] },
    { id: 2, callFrame: frame('handle', inRepo('src/http/a.js'), 9), children: [3, 4] },
    { id: 3, callFrame: frame('parse<json>', 'node:internal/x', 0) },
    { id: 4, callFrame: frame('write;v', inRepo('node_modules/undici/lib/c.js'), 2) },
    { id: 5, callFrame: frame('(garbage collector)') },
    { id: 6, callFrame: frame('(idle)') },
  ],
  // Each sample weighs the time to the next one; the last, the interval before it.
  samples: [6, 2, 3, 3, 4, 5, 6, 3],
  timeDeltas: [0, 1000, 100, 100, 100, 100, 200, 300],
  startTime: 0,
  endTime: 1900,
};

describe('flame graph of a cpuprofile', () => {
  it('sums self and inclusive time per call path, idle left out', () => {
    const root = callTree(profile);
    expect(root.total).toBe(900);
    const [handle, gc] = root.children;
    expect(handle?.name).toBe('handle');
    expect(handle?.file).toBe('src/http/a.js:10');
    expect(handle?.self).toBe(100);
    // parse: two samples of 100 and the last one (weighing the 300 before it).
    expect(handle?.children.map((c) => [c.name, c.total])).toEqual([
      ['parse<json>', 500],
      ['write;v', 100],
    ]);
    expect(handle?.total).toBe(700);
    expect([gc?.name, gc?.total]).toEqual(['(garbage collector)', 200]);
  });

  it('keeps only the last milliseconds when asked', () => {
    // From 1.4 ms on: the gc sample at 1.4 ms, an idle one and the parse sample at 1.9 ms.
    const root = callTree(profile, 0.5);
    expect(root.total).toBe(200 + 300);
    expect(root.children.map((c) => [c.name, c.total])).toEqual([
      ['handle', 300],
      ['(garbage collector)', 200],
    ]);
  });

  it('writes folded stacks that flamegraph.pl and speedscope read', () => {
    const lines = folded(callTree(profile)).trim().split('\n');
    expect(lines).toEqual([
      'handle src/http/a.js:10 100',
      'handle src/http/a.js:10;parse<json> node:internal/x:1 500',
      'handle src/http/a.js:10;write,v node_modules/undici/lib/c.js:3 100',
      '(garbage collector) 200',
    ]);
  });

  it('draws one box per frame, widths in proportion, names escaped', () => {
    const svg = flameSvg(callTree(profile), 'a <title> & more');
    expect(svg).toContain('a &lt;title&gt; &amp; more');
    const rects = [
      ...svg.matchAll(/<title>([^<]*)<\/title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"/g),
    ];
    const byName = new Map(rects.map((r) => [r[1]!.split(/[ :]/)[0], r]));
    expect(rects).toHaveLength(5);
    const width = (name: string) => Number(byName.get(name)![4]);
    expect(width('all')).toBeCloseTo(1180, 0);
    expect(width('handle')).toBeCloseTo((1180 * 7) / 9, 0);
    expect(width('parse&lt;json&gt;')).toBeCloseTo((1180 * 5) / 9, 0);
    // A callee sits one row above its caller and starts at its caller's left edge.
    const y = (name: string) => Number(byName.get(name)![3]);
    expect(y('handle') - y('parse&lt;json&gt;')).toBe(17);
    expect(Number(byName.get('parse&lt;json&gt;')![2])).toBe(Number(byName.get('handle')![2]));
    expect(svg).toContain('handle (src/http/a.js:10): 0.7 ms, 77.78% (self 0.1 ms)');
  });
});

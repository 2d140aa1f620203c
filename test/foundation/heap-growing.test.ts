import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';

const run = promisify(execFile);

/**
 * The factor V8 applies at the next major GC, from its own trace: `applyHeapGrowing` is called in
 * a child node (with `nodeFlags`), which then forces a major GC.
 */
async function growingFactor(percent: number, nodeFlags: string[] = []): Promise<string> {
  const script = `import('./src/main.ts').then((m) => { m.applyHeapGrowing(${percent}); globalThis.gc(); });`;
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--expose-gc', '--trace-gc-verbose', ...nodeFlags, '-e', script],
    { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
  );
  const limits = [...stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)];
  expect(limits.length).toBeGreaterThan(0);
  return limits.at(-1)![1]!;
}

describe('V8 heap growing (server.heap_growing_percent)', () => {
  it('defaults to 50 and follows MODELGATE_SERVER_HEAP_GROWING_PERCENT (0..300)', () => {
    expect(loadConfig({}).server.heap_growing_percent).toBe(50);
    expect(loadConfig({ MODELGATE_SERVER_HEAP_GROWING_PERCENT: '0' }).server.heap_growing_percent).toBe(0);
    expect(() => loadConfig({ MODELGATE_SERVER_HEAP_GROWING_PERCENT: '301' })).toThrow(
      /heap_growing_percent/,
    );
  });

  it('sets the factor V8 grows the old generation by; 0 leaves V8 its own; a node flag wins', async () => {
    const [set, own, flag] = await Promise.all([
      growingFactor(50),
      growingFactor(0),
      growingFactor(50, ['--heap-growing-percent=20']),
    ]);
    expect(set).toBe('1.5');
    expect(own).not.toBe('1.5'); // V8's own: 1.1-4.0 depending on the machine and the GC's speed
    expect(flag).toBe('1.2');
  });
});

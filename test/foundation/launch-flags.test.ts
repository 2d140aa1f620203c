import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { gatewayEntry, ROOT, startNodeFlags } from '../../bench/procs.js';

const run = promisify(execFile);

/**
 * The size of V8's new space (MB) in a child node started with `flags`, after a burst of
 * allocation and then five seconds of near idleness with a scavenge each second: what an idle
 * gateway's timers do. V8 shrinks the new space at a GC that sees a low allocation rate.
 */
async function newSpaceAfterIdle(flags: string[]): Promise<number> {
  const script = `
const { getHeapSpaceStatistics } = require('node:v8');
const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
let keep = [];
const t0 = Date.now();
while (Date.now() - t0 < 500) { keep.push({ a: new Array(50).fill(Math.random()) }); if (keep.length > 5000) keep = []; }
keep = [];
let n = 0;
const tick = setInterval(() => {
  globalThis.gc({ type: 'minor' });
  if (++n === 6) { clearInterval(tick); process.stdout.write(String(size())); }
}, 1000);`;
  const { stdout } = await run(process.execPath, ['--expose-gc', ...flags, '-e', script], {
    timeout: 60_000,
  });
  return Number(stdout);
}

describe('node flags the gateway is started with', () => {
  it('npm start, the Docker image and the bench start node alike, with a floor under the young generation', () => {
    const flags = startNodeFlags();
    expect(flags).toContain('--min-semi-space-size=8');
    const cmd = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8').match(/^CMD (\[.*\])$/m);
    expect(cmd).not.toBeNull();
    expect(JSON.parse(cmd![1]!)).toEqual(['node', ...flags, 'dist/src/cli/main.js', 'serve']);
    expect(gatewayEntry(false).args.slice(0, flags.length)).toEqual(flags);
  });

  it('the modelgate bin starts node with them too, through its shebang', async () => {
    const flags = startNodeFlags();
    const shebang = readFileSync(join(ROOT, 'src/cli/main.ts'), 'utf8').split('\n')[0]!;
    expect(shebang).toBe(`#!/usr/bin/env -S node ${flags.join(' ')}`);
    // Run as an executable, as npm's bin link runs it: env -S splits the line, node gets the flags.
    const dir = mkdtempSync(join(tmpdir(), 'mg-shebang-'));
    try {
      const script = join(dir, 'bin.js');
      writeFileSync(script, `${shebang}\nprocess.stdout.write(JSON.stringify(process.execArgv));\n`);
      chmodSync(script, 0o755);
      const { stdout } = await run(script, [], { timeout: 30_000 });
      expect(JSON.parse(stdout)).toEqual(flags);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the new space from shrinking to 1 MB while idle, which made the next burst stall', async () => {
    // Without the floor V8 shrinks the new space to 1 MB once idle; the next burst then scavenges
    // every few dozen requests and promotes what is in flight, for seconds (docs/performance.md,
    // Session 20).
    const [plain, started] = await Promise.all([newSpaceAfterIdle([]), newSpaceAfterIdle(startNodeFlags())]);
    expect(plain).toBeLessThanOrEqual(2);
    expect(started).toBeGreaterThanOrEqual(8);
  });
});

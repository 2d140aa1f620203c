import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BUILD_DIR,
  benchServer,
  buildAll,
  callgrind,
  callgrindTotal,
  cleanEnv,
  numberArg,
  ROOT,
  startNode,
  stringArg,
} from './procs.js';

/**
 * Instructions per upstream call of the client alone (`bench/client-loop.mjs`), counted by
 * callgrind. Two variants, each run twice, with `--calls` and with `--calls` + `--more` calls;
 * the difference over `--more` is the cost of one call once V8 has optimized the loop, free of
 * start-up. Two processes at a time (the machine's two cores); the fake upstream runs natively.
 * - default: `sendText` (undici's dispatch API, the gateway's path for non-streamed answers)
 *   against `send` then `text()` (undici's `request()` and its body stream, what `sendText` did
 *   before session 9);
 * - `--against <git ref> [--mode stream|text]`: one mode (default `stream`, a streamed answer
 *   of 20 events read batch by batch) on this checkout's code against the same on the ref's,
 *   built in a temporary worktree.
 * Usage: node --import tsx bench/client-instructions.ts [--calls 4000] [--more 10000] [--no-build]
 *        [--against <ref>] [--mode stream]
 */
const calls = numberArg('calls', 4000);
const more = numberArg('more', 10_000);
const against = stringArg('against');
const mode = stringArg('mode') ?? 'stream';
if (!process.argv.includes('--no-build')) buildAll();

interface Variant {
  label: string;
  mode: string;
  build: string;
}
const variants: Variant[] = [];
let worktree: string | undefined;
if (against) {
  worktree = mkdtempSync(join(tmpdir(), 'modelgate-against-'));
  execFileSync('git', ['worktree', 'add', '--detach', worktree, against], { cwd: ROOT, stdio: 'inherit' });
  symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'));
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--outDir', 'build.tmp', '--sourceMap', 'false'],
    {
      cwd: worktree,
      stdio: 'inherit',
    },
  );
  variants.push({ label: `${mode}, this checkout`, mode, build: BUILD_DIR });
  variants.push({ label: `${mode}, ${against}`, mode, build: join(worktree, 'build.tmp') });
} else {
  variants.push({ label: 'sendText', mode: 'text', build: BUILD_DIR });
  variants.push({ label: 'send + text()', mode: 'send', build: BUILD_DIR });
}

const upstream = await startNode({
  name: 'fake-upstream',
  args: benchServer('bench/fake-upstream.ts', true),
  env: cleanEnv({ PORT: '0' }),
  ready: /listening on (http:\S+)/,
});
const dir = mkdtempSync(join(tmpdir(), 'modelgate-cg-client-'));

/** Total Ir of one run of the loop under callgrind. */
function count(v: Variant, i: number, n: number): Promise<number> {
  const out = join(dir, `${i}-${n}.cg`);
  const [cmd, ...args] = [
    ...callgrind(out),
    process.execPath,
    join(ROOT, 'bench/client-loop.mjs'),
    v.mode,
    String(n),
    upstream.url,
    v.build,
  ];
  return new Promise((resolve, reject) => {
    execFile(cmd!, args, (err, _stdout, stderr) => {
      if (err) return reject(new Error(`${v.label} ${n}: ${err.message}\n${stderr}`));
      try {
        resolve(callgrindTotal(out));
      } catch (e) {
        reject(e);
      }
    });
  });
}

try {
  const small = await Promise.all(variants.map((v, i) => count(v, i, calls)));
  const large = await Promise.all(variants.map((v, i) => count(v, i, calls + more)));
  const per = variants.map((_v, i) => (large[i]! - small[i]!) / more);
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  const width = Math.max(...variants.map((v) => v.label.length)) + 2;
  variants.forEach((v, i) => {
    process.stdout.write(`${`${v.label}:`.padEnd(width)} ${k(per[i]!)} instructions per call\n`);
  });
  const [a, b] = per as [number, number];
  const verb = a <= b ? 'saves' : 'costs';
  process.stdout.write(
    `the first ${verb} ${k(Math.abs(b - a))} per call (${((Math.abs(b - a) / b) * 100).toFixed(1)}% of the second's)\n`,
  );
} finally {
  await upstream.stop();
  rmSync(dir, { recursive: true, force: true });
  if (worktree) execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: ROOT });
}

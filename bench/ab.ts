import { execFileSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cannon, median, type Target } from './load.js';
import { buildAll, cpuSeconds, cpuSecondsByName, ROOT } from './procs.js';
import { DB_SERVERS, type Stack, startStack } from './stack.js';

/**
 * A/B of two versions of the gateway on this machine: a git ref against the working tree, both
 * built, driven alternately (A B, B A, ...) at saturation with non-streaming requests, CPU
 * time per request from /proc. On a shared machine whose speed drifts by tens of percent within
 * minutes, alternating short rounds is what makes a 5% change visible; compare medians.
 * The ref is checked out as a git worktree in the temp dir (modelgate-ab-<sha>, kept for the next
 * run; `git worktree prune` forgets it once deleted). Its bench/ must have startStack: any commit
 * since issue 9 landed.
 * Usage: taskset -c 1 node --import tsx bench/ab.ts <ref> [rounds=6] [--pg] [--no-build]
 */
const args = process.argv.slice(2);
const ref = args[0];
if (!ref || ref.startsWith('--')) {
  process.stderr.write('usage: node --import tsx bench/ab.ts <git-ref> [rounds=6] [--pg] [--no-build]\n');
  process.exit(2);
}
const rounds = Number(args[1]) > 0 ? Number(args[1]) : 6;
const pg = args.includes('--pg');
const build = !args.includes('--no-build');

const git = (...a: string[]) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();
const sha = git('rev-parse', '--short', `${ref}^{commit}`);
const dir = join(tmpdir(), `modelgate-ab-${sha}`);
if (!existsSync(dir)) {
  git('worktree', 'prune');
  git('worktree', 'add', '--detach', dir, sha);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
}
const other = (await import(join(dir, 'bench/stack.ts'))) as { startStack: typeof startStack };
// With --no-build a side never compiled (a new worktree) would run its sources through tsx and
// the other compiled JS: an A/B of the loader, not of the code. Such a side is compiled anyway.
const compiled = (root: string) => existsSync(join(root, 'bench/results/build.tmp/src/cli/main.js'));
if (build || !compiled(dir)) {
  process.stderr.write(`compiling ${sha} ...\n`);
  ((await import(join(dir, 'bench/procs.ts'))) as { buildAll: () => void }).buildAll();
}
if (build || !compiled(ROOT)) {
  process.stderr.write('compiling the working tree ...\n');
  buildAll();
}

const sides: Array<{ name: string; stack: Stack; cpu: number[]; db: number[]; rps: number[] }> = [
  { name: `A ${sha}`, stack: await other.startStack({ built: true, pg }), cpu: [], db: [], rps: [] },
  { name: 'B working tree', stack: await startStack({ built: true, pg }), cpu: [], db: [], rps: [] },
];
const target = (s: Stack): Target => ({
  name: 'gateway',
  url: s.gateway.url,
  headers: { authorization: `Bearer ${s.apiKey}` },
});
try {
  // Warm-up: both JITs settle before anything counts (V8 needs ~10 s of saturation: session 26).
  for (const s of sides) await cannon(target(s.stack), { stream: false, duration: 12, connections: 50 });
  for (let i = 0; i < rounds; i++) {
    for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
      const c0 = cpuSeconds(s.stack.gateway.pid);
      const d0 = pg ? cpuSecondsByName(DB_SERVERS) : 0;
      const r = await cannon(target(s.stack), { stream: false, duration: 4, connections: 50 });
      s.cpu.push(((cpuSeconds(s.stack.gateway.pid) - c0) * 1000) / (r.rps * 4));
      // The database servers (shared by both sides, driven one at a time) with --pg.
      if (pg) s.db.push(((cpuSecondsByName(DB_SERVERS) - d0) * 1000) / (r.rps * 4));
      s.rps.push(r.rps);
    }
  }
} finally {
  for (const s of sides) await s.stack.close();
}
for (const s of sides)
  process.stdout.write(
    `${s.name.padEnd(18)} cpu ms/req ${s.cpu.map((x) => x.toFixed(4)).join(' ')}  median ${median(s.cpu).toFixed(4)}` +
      `  req/s ${s.rps.map((x) => x.toFixed(0)).join(' ')}` +
      (pg
        ? `  db ms/req ${s.db.map((x) => x.toFixed(4)).join(' ')}  median ${median(s.db).toFixed(4)}`
        : '') +
      '\n',
  );
// Each round's B over the same round's A (the two ran seconds apart): whether a difference holds
// in every round, both orders, or rests on one. Not proof against everything: in session 27 an
// A/B of one build against itself read x1.152, every round 1.11-1.15, and x0.988 (rounds
// 0.95-1.06) when repeated minutes later; a side can be slower for a whole run for reasons
// outside its code. Repeat an A/B before believing a few percent.
const byRound = (xs: (s: (typeof sides)[number]) => number[]) =>
  xs(sides[1]!).map((b, i) => b / xs(sides[0]!)[i]!);
const cpuByRound = byRound((s) => s.cpu);
process.stdout.write(
  `B/A: cpu per request x${(median(sides[1]!.cpu) / median(sides[0]!.cpu)).toFixed(3)}, req/s x${(median(sides[1]!.rps) / median(sides[0]!.rps)).toFixed(3)}` +
    (pg ? `, database CPU per request x${(median(sides[1]!.db) / median(sides[0]!.db)).toFixed(3)}` : '') +
    ' (medians)\n' +
    `B/A by round: cpu per request ${cpuByRound.map((r) => r.toFixed(3)).join(' ')}` +
    `  median x${median(cpuByRound).toFixed(3)}, req/s median x${median(byRound((s) => s.rps)).toFixed(3)}\n`,
);
process.exit(0);

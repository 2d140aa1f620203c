import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  benchServer,
  buildAll,
  callgrind,
  callgrindTotal,
  cleanEnv,
  numberArg,
  ROOT,
  startNode,
} from './procs.js';

/**
 * Instructions per upstream call of the client alone (`bench/client-loop.mjs`), counted by
 * callgrind: `sendText` (undici's dispatch API, the gateway's path for non-streamed answers)
 * against `send` then `text()` (undici's `request()` and its body stream, what `sendText` did
 * before session 9). Each mode runs twice, with `--calls` and with `--calls` + `--more` calls;
 * the difference over `--more` is the cost of one call once V8 has optimized the loop, free of
 * start-up. Two processes at a time (the machine's two cores); the fake upstream runs natively.
 * Usage: node --import tsx bench/client-instructions.ts [--calls 4000] [--more 10000] [--no-build]
 */
const calls = numberArg('calls', 4000);
const more = numberArg('more', 10_000);
if (!process.argv.includes('--no-build')) buildAll();

const upstream = await startNode({
  name: 'fake-upstream',
  args: benchServer('bench/fake-upstream.ts', true),
  env: cleanEnv({ PORT: '0' }),
  ready: /listening on (http:\S+)/,
});
const dir = mkdtempSync(join(tmpdir(), 'modelgate-cg-client-'));

/** Total Ir of one run of the loop under callgrind. */
function count(mode: string, n: number): Promise<number> {
  const out = join(dir, `${mode}-${n}.cg`);
  const [cmd, ...args] = [
    ...callgrind(out),
    process.execPath,
    join(ROOT, 'bench/client-loop.mjs'),
    mode,
    String(n),
    upstream.url,
  ];
  return new Promise((resolve, reject) => {
    execFile(cmd!, args, (err, _stdout, stderr) => {
      if (err) return reject(new Error(`${mode} ${n}: ${err.message}\n${stderr}`));
      try {
        resolve(callgrindTotal(out));
      } catch (e) {
        reject(e);
      }
    });
  });
}

try {
  const [textSmall, sendSmall] = await Promise.all([count('text', calls), count('send', calls)]);
  const [textLarge, sendLarge] = await Promise.all([
    count('text', calls + more),
    count('send', calls + more),
  ]);
  const text = (textLarge - textSmall) / more;
  const send = (sendLarge - sendSmall) / more;
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  process.stdout.write(`sendText:        ${k(text)} instructions per call\n`);
  process.stdout.write(`send + text():   ${k(send)} instructions per call\n`);
  process.stdout.write(
    `saved per call:  ${k(send - text)} (${(((send - text) / send) * 100).toFixed(0)}%)\n`,
  );
} finally {
  await upstream.stop();
  rmSync(dir, { recursive: true, force: true });
}

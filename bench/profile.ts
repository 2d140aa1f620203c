import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatSummary, summarize } from './cpuprofile-top.js';
import { cannon, type Target } from './load.js';
import { ROOT } from './procs.js';
import { startStack } from './stack.js';

/**
 * Runs the gateway with --cpu-prof, drives it at saturation (half the time non-streaming, half
 * streaming), stops it so V8 writes the profile, and prints the top functions. The raw
 * .cpuprofile stays in a temp dir (open it in Chrome DevTools or speedscope for a flame graph);
 * the summary goes to bench/results/profile-latest.txt.
 */
export async function profile(
  seconds: number,
  connections: number,
  o: { pg?: boolean; built?: boolean; mode?: 'both' | 'stream' | 'nonstream' } = {},
): Promise<void> {
  const { pg = false, built = false, mode = 'both' } = o;
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-prof-'));
  const stack = await startStack({
    pg,
    built,
    withBaseline: false,
    gatewayFlags: ['--cpu-prof', '--cpu-prof-dir', dir],
  });
  try {
    const gw: Target = {
      name: 'gateway',
      url: stack.gateway.url,
      headers: { authorization: `Bearer ${stack.apiKey}` },
    };
    const kinds = mode === 'both' ? [false, true] : [mode === 'stream'];
    const each = Math.max(1, Math.round(seconds / kinds.length));
    for (const stream of kinds) {
      const r = await cannon(gw, { stream, duration: each, connections });
      process.stderr.write(
        `profiled load: ${r.rps.toFixed(0)} req/s ${stream ? 'streaming' : 'non-streaming'}\n`,
      );
    }
    await stack.gateway.stop();
  } finally {
    await stack.close();
  }
  // V8 writes one profile per thread; the main thread's is the large one.
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (!file) throw new Error(`no profile written in ${dir}`);
  const text = `profile: ${join(dir, file)}\n${formatSummary(summarize(join(dir, file), 30))}`;
  writeFileSync(join(ROOT, `bench/results/profile-${pg ? 'pg' : 'sqlite'}-${mode}-latest.txt`), text);
  process.stdout.write(text);
}

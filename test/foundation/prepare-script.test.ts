import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const prepare: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.prepare;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mg-prepare-'));
  // The project's prepare command, in a folder whose build only leaves a mark.
  const build = `node -e "require('fs').writeFileSync('built', '')"`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'p', scripts: { prepare, build } }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the prepare command as npm would for `npm_command`, and says whether it built. */
async function builds(npmCommand: string, withDist: boolean): Promise<boolean> {
  rmSync(join(dir, 'built'), { force: true });
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  if (withDist) {
    mkdirSync(join(dir, 'dist', 'src', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'src', 'cli', 'main.js'), '');
  }
  await run('sh', ['-c', prepare], {
    cwd: dir,
    env: { ...process.env, npm_command: npmCommand },
    timeout: 60_000,
  });
  return existsSync(join(dir, 'built'));
}

describe('the prepare script', () => {
  it('builds on npm install and npm ci', async () => {
    expect(await builds('install', true)).toBe(true);
    expect(await builds('ci', false)).toBe(true);
  });

  it('does not build again when npx modelgate installs the built folder for itself', async () => {
    // `npx modelgate` in a clone installs the folder into npx's cache, which runs prepare: it
    // rebuilt everything (minutes, silently) and emptied web/dist under a running gateway.
    expect(await builds('exec', true)).toBe(false);
  });

  it('still builds for npx in a folder never built (npm install --ignore-scripts)', async () => {
    expect(await builds('exec', false)).toBe(true);
  });
});

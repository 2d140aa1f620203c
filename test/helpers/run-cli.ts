import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
// tsx's own transpiler (a dependency of tsx): what `--import tsx` would run, bundled once.
import { build } from 'esbuild';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const ROOT = join(import.meta.dirname, '..', '..');
const BUILT = join(ROOT, 'dist', 'test-cli');
let built: Promise<string> | undefined;

/**
 * `src/cli/main.ts` bundled into one file (packages left to node_modules), named by a hash of the
 * sources so every test file and run reuses it until a source changes. A start through
 * `--import tsx` transpiles every module again, three times the CPU of the bundle's start: a
 * test that runs the CLI twenty times spent minutes on it under load.
 */
function builtCli(): Promise<string> {
  built ??= (async () => {
    const hash = createHash('sha256');
    const src = join(ROOT, 'src');
    for (const e of readdirSync(src, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => join(d.parentPath, d.name))
      .sort())
      hash.update(e).update(readFileSync(e));
    const out = join(BUILT, `${hash.digest('hex').slice(0, 16)}.mjs`);
    if (existsSync(out)) return out;
    mkdirSync(BUILT, { recursive: true });
    // Another file's build of older sources is left behind: only the current one is kept.
    for (const old of readdirSync(BUILT)) if (old.endsWith('.mjs')) rmSync(join(BUILT, old), { force: true });
    const tmp = join(BUILT, `${randomUUID()}.tmp`);
    await build({
      entryPoints: [join(src, 'cli', 'main.ts')],
      outfile: tmp,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'silent',
    });
    // Renamed whole, so a file running at once never starts a half-written bundle.
    renameSync(tmp, out);
    return out;
  })();
  return built;
}

/**
 * Runs `modelgate <args>` from the sources in a child process with only `env` (and PATH), `input`
 * on its standard input, in `cwd` (the test process's own by default); resolves with the exit
 * code and both outputs, whatever the code.
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  input = '',
  cwd?: string,
): Promise<CliResult> {
  const cli = await builtCli();
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [cli, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000, cwd },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') reject(err);
        else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
    child.stdin!.end(input);
  });
}

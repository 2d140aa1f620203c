import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');

let tasksetOk: boolean | undefined;
/** True when `taskset` exists and this machine lets us pin (containers sometimes refuse). */
export function canPin(): boolean {
  if (tasksetOk === undefined) {
    try {
      execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
      tasksetOk = true;
    } catch {
      tasksetOk = false;
    }
  }
  return tasksetOk;
}

/**
 * Pins this process, every thread of it, to `cpus` (taskset -a -p). The tools that start a stack
 * are its load generator, which belongs on the upstream's core (stack.ts); left floating, it
 * also ran on the proxy's core and took up to 14% of it from the baseline at saturation.
 */
export function pinSelf(cpus: string): boolean {
  if (!canPin()) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  url: string;
  stderr: () => string;
  stop(): Promise<void>;
}

interface StartOptions {
  name: string;
  /** Arguments to `node` (flags then script). */
  args: string[];
  env: Record<string, string>;
  /** CPU list for taskset, e.g. "0". */
  cpus?: string;
  /** Regex whose first group is the listening URL, matched against stdout. */
  ready: RegExp;
  timeoutMs?: number;
  /** A command that runs node, before it (e.g. valgrind and its options); it must exec node in place. */
  wrap?: string[];
}

/**
 * Starts `node <args>` pinned with taskset (which execs, so the child's pid is node's own and
 * /proc/<pid>/status is the process under test) and resolves once it prints its URL.
 */
export function startNode(o: StartOptions): Promise<Proc> {
  const pin = o.cpus !== undefined && canPin();
  const node = [...(o.wrap ?? []), process.execPath, ...o.args];
  const [cmd, ...args] = pin ? ['taskset', '-c', o.cpus!, ...node] : node;
  const child = spawn(cmd!, args, { cwd: ROOT, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => {
    err = (err + c.toString()).slice(-20_000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${o.name} did not start in time:\n${out}\n${err}`));
    }, o.timeoutMs ?? 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${o.name} exited with ${code}:\n${out}\n${err}`));
    });
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = o.ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      resolve({
        name: o.name,
        child,
        pid: child.pid!,
        url: m[1]!,
        stderr: () => err,
        stop: () => stopChild(child),
      });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Resident set size in MB, from /proc/<pid>/status (VmRSS). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/**
 * Where a process's resident memory is, from /proc/<pid>/smaps, in MB by kind of mapping:
 * `file` (the node binary, libraries), `brk` (glibc's main malloc heap), `v8page` (V8's 256 KB
 * heap pages), `anon` (other anonymous memory: threads' malloc arenas, stacks) and `other`
 * (named pseudo-mappings such as [stack]).
 */
export function rssByMapping(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let kind = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      kind = mappingKind(head[3]!, Number.parseInt(head[2]!, 16) - Number.parseInt(head[1]!, 16));
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] = (out[kind] ?? 0) + Number(rss[1]) / 1024;
  }
  return out;
}

function mappingKind(name: string, bytes: number): string {
  if (name.startsWith('/')) return 'file';
  if (name === '[heap]') return 'brk';
  if (name) return 'other';
  return bytes === 256 * 1024 ? 'v8page' : 'anon';
}

/**
 * One core's cumulative time from /proc/stat, in ticks: all of it (user, nice, system, idle,
 * iowait, irq, softirq, steal; guest time is already in user) and the hypervisor's `steal`, the
 * time the vCPU wanted to run and the host ran something else. Undefined when the core is not
 * listed (or /proc/stat cannot be read).
 */
export interface CoreTimes {
  total: number;
  steal: number;
}

export function parseCoreTimes(stat: string, cpu: string): CoreTimes | undefined {
  const line = stat.split('\n').find((l) => l.startsWith(`cpu${cpu} `));
  if (!line) return undefined;
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 8 || f.some((x) => !Number.isFinite(x))) return undefined;
  return { total: f.reduce((a, x) => a + x, 0), steal: f[7]! };
}

export function coreTimes(cpu: string): CoreTimes | undefined {
  try {
    return parseCoreTimes(readFileSync('/proc/stat', 'utf8'), cpu);
  } catch {
    return undefined;
  }
}

/** The share of a core's time between two readings that the hypervisor stole, in percent. */
export function stealPct(before: CoreTimes | undefined, after: CoreTimes | undefined): number | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  return (100 * (after.steal - before.steal)) / (after.total - before.total);
}

/** A steal share as the tools print it: one decimal and `unit`, or '-' when it could not be read. */
export const stealText = (pct: number | undefined, unit = ''): string =>
  pct === undefined ? '-' : `${pct.toFixed(1)}${unit}`;

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (100 ticks/s on Linux). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * CPU seconds used so far by every process whose command name is one of `names` (e.g. the
 * PostgreSQL backends and Redis, which are not children of the bench and not pinned).
 */
export function cpuSecondsByName(names: readonly string[]): number {
  let total = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!names.includes(comm)) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // the process exited between the listing and the read
    }
  }
  return total;
}

/** Where `--build` compiles the gateway and the bench's own servers (git-ignored). */
export const BUILD_DIR = join(ROOT, 'bench/results/build.tmp');

/**
 * Compiles src/ (tsconfig.build.json) and the bench servers to plain JS in BUILD_DIR, so both
 * proxies run as in production, without the tsx loader (which costs memory and start-up CPU).
 */
export function buildAll(): void {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--outDir', BUILD_DIR, '--sourceMap', 'false'],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
  const files = ['bench/baseline-proxy.ts', 'bench/fake-upstream.ts'];
  const flags = ['--module', 'nodenext', '--target', 'es2023', '--skipLibCheck', '--types', 'node'];
  execFileSync(process.execPath, [tsc, ...flags, '--rootDir', ROOT, '--outDir', BUILD_DIR, ...files], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}

/** How to run one entry point: compiled JS when built, else the TypeScript through tsx. */
function entry(ts: string, built: boolean): string[] {
  const js = join(BUILD_DIR, ts.replace(/\.ts$/, '.js'));
  if (built && existsSync(js)) return [js];
  return ['--import', 'tsx', join(ROOT, ts)];
}

export function benchServer(ts: string, built: boolean): string[] {
  return entry(ts, built);
}

/**
 * The node flags `npm start` runs the gateway with: the words between `node` and the script in
 * package.json's start script (deploy/Dockerfile's CMD carries the same; a test holds them
 * equal). The bench starts the gateway with them, so it measures what users run.
 */
export function startNodeFlags(): string[] {
  const start = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start;
  const words = start.trim().split(/\s+/);
  const script = words.indexOf('dist/src/cli/main.js');
  if (words[0] !== 'node' || script < 0) throw new Error(`unexpected start script: ${start}`);
  return words.slice(1, script);
}

/**
 * The gateway's entry point, after `npm start`'s node flags and then `extra` (V8 takes a flag's
 * last occurrence, so `extra` can override a start flag, e.g. `--min-semi-space-size`):
 * `--build` output, else the project's build (dist/) when present, else the sources through tsx.
 */
export function gatewayEntry(
  built: boolean,
  extra: readonly string[] = [],
): { args: string[]; kind: string } {
  const flags = [...startNodeFlags(), ...extra];
  if (built)
    return { args: [...flags, ...entry('src/cli/main.ts', true), 'serve'], kind: 'compiled (bench --build)' };
  const dist = join(ROOT, 'dist/src/cli/main.js');
  if (existsSync(dist)) return { args: [...flags, dist, 'serve'], kind: 'dist' };
  return { args: [...flags, ...entry('src/cli/main.ts', false), 'serve'], kind: 'tsx' };
}

/** bench/loop-probe.mjs's settings, passed on with NODE_OPTIONS so every process logs alike. */
const LOOP_PROBE_ENV = [
  'LOOP_PROBE_DIR',
  'LOOP_PROBE_BLOCK_MS',
  'LOOP_PROBE_GC_MS',
  'LOOP_PROBE_REQ_MS',
  'LOOP_PROBE_MEM_S',
  'LOOP_PROBE_TRACE',
];

/**
 * Only what a process needs: PATH/HOME and the bench's own settings, never stray MODELGATE_*.
 * NODE_OPTIONS passes, so one probe can be loaded into every process of a run alike
 * (`NODE_OPTIONS="--import ./bench/loop-probe.mjs"`, docs/performance.md, Session 28).
 */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const keep: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_OPTIONS', ...LOOP_PROBE_ENV])
    if (process.env[k]) keep[k] = process.env[k]!;
  return { ...keep, NODE_ENV: 'production', ...extra };
}

/**
 * The command line of the probe tools (gc.ts, pauses.ts, tail.ts, wakeups.ts):
 * `[seconds] [options] [-- node flags]`.
 * `own` is what comes before `--`, `extra` the node flags for the gateway after it, `gatewayEnv`
 * the repeatable `--env NAME=value`, `seconds` the leading number (or `defaultSeconds`).
 */
export function probeArgs(
  argv: readonly string[],
  defaultSeconds: number,
): { own: string[]; extra: string[]; gatewayEnv: Record<string, string>; seconds: number } {
  const dash = argv.indexOf('--');
  const own = dash >= 0 ? argv.slice(0, dash) : [...argv];
  const extra = dash >= 0 ? argv.slice(dash + 1) : [];
  const gatewayEnv: Record<string, string> = {};
  for (let i = 0; i < own.length; i++)
    if (own[i] === '--env') {
      const [k, ...v] = (own[++i] ?? '').split('=');
      gatewayEnv[k!] = v.join('=');
    }
  const seconds = Number(own[0] && !own[0].startsWith('--') ? own[0] : defaultSeconds);
  return { own, extra, gatewayEnv, seconds };
}

/** perf_hooks.constants.NODE_PERFORMANCE_GC_* as the probes name them (2 is V8's minor mark-compact). */
export const GC_KINDS: Readonly<Record<number, string>> = {
  1: 'scavenge',
  2: 'minor-mark-compact',
  4: 'mark-compact',
  8: 'incremental',
  16: 'weak-callbacks',
};

/**
 * A probe for a proxy to preload (`--import <probe>`): an ES module written into a fresh temp
 * directory, which `source` may use for its output files.
 */
export function writeProbe(name: string, source: (dir: string) => string): { dir: string; probe: string } {
  const dir = mkdtempSync(join(tmpdir(), `modelgate-${name}-`));
  const probe = join(dir, 'probe.mjs');
  writeFileSync(probe, source(dir));
  return { dir, probe };
}

/** The number after `--<name>` on the command line, or `dflt`. */
export function numberArg(name: string, dflt: number): number {
  const v = stringArg(name);
  return v === undefined ? dflt : Number(v);
}

/** The value after `--name` on the command line, if given. */
export function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/**
 * valgrind's command line for counting a node process's instructions with callgrind, output to
 * `outFile` (`%p` is the pid). V8 writes and rewrites machine code: without
 * `--smc-check=all-non-file` valgrind would run stale translations.
 */
export const callgrind = (outFile: string): string[] => [
  'valgrind',
  '--tool=callgrind',
  `--callgrind-out-file=${outFile}`,
  '--smc-check=all-non-file',
  '--dump-instr=no',
  '--dump-line=no',
  '--quiet',
];

/** Total instructions (Ir) a callgrind dump counted. */
export function callgrindTotal(file: string): number {
  const m = /^summary: (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`no summary in ${file}`);
  return Number(m[1]);
}

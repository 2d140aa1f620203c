import { spawn } from 'node:child_process';
import { cannon } from './load.js';
import { buildAll, numberArg } from './procs.js';
import { startStack } from './stack.js';

/**
 * System calls per request under saturation, gateway against baseline: `perf stat` counting
 * syscall tracepoints (needs `perf` and root or perf_event_paranoid <= 1), attached to each proxy
 * for one load window after a warm-up. Unlike strace, it barely slows the process, so batching
 * (the request log's transactions) looks as it does unobserved. More calls per request is CPU
 * the request path spends in the kernel (writev, epoll, SQLite's WAL writes and locks).
 * Usage: node --import tsx bench/syscalls.ts [--pg] [--no-build] [--seconds 5]
 */
const CALLS = [
  'read',
  'write',
  'writev',
  'pwrite64',
  'pread64',
  'fsync',
  'fdatasync',
  'fcntl',
  'futex',
  'epoll_wait',
  'epoll_pwait',
  'epoll_ctl',
  'setsockopt',
  'getsockopt',
  'madvise',
  'mmap',
  'munmap',
  'mprotect',
  'brk',
  'getpid',
  'clock_gettime',
  'accept4',
  'close',
];
const args = process.argv.slice(2);
const pg = args.includes('--pg');
const seconds = numberArg('seconds', 5);
if (!args.includes('--no-build')) buildAll();
const stack = await startStack({ built: true, pg });
try {
  for (const which of ['baseline', 'gateway'] as const) {
    const t = stack.target(which);
    const p = which === 'gateway' ? stack.gateway : stack.baseline!;
    await cannon(t, { stream: false, duration: 12, connections: 50 }); // warm-up, as the full run's
    const events = CALLS.map((c) => `syscalls:sys_enter_${c}`).join(',');
    const perf = spawn('perf', ['stat', '-x', ',', '-e', events, '-p', String(p.child.pid)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let report = '';
    perf.stderr.on('data', (c: Buffer) => {
      report += c.toString();
    });
    await new Promise((r) => setTimeout(r, 500));
    const r = await cannon(t, { stream: false, duration: seconds, connections: 50 });
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
    process.stdout.write(`\n${which}: ${r.ok} requests (${r.rps.toFixed(0)} req/s under perf)\n`);
    for (const line of report.split('\n')) {
      const [count, , event] = line.split(',');
      const name = event?.replace('syscalls:sys_enter_', '');
      if (name && Number(count) > 0)
        process.stdout.write(`  ${name.padEnd(16)} ${(Number(count) / r.ok).toFixed(3)} per request\n`);
    }
  }
} finally {
  await stack.close();
}

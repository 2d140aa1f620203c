// Per-core and per-thread CPU, sampled every INTERVAL ms (default 10), for laying beside the
// loop probe's records (bench/loop-probe.mjs) when a paced round stalls:
//   taskset -c 1 node bench/cpu-sampler.mjs <out-file> [pids-file] [interval-ms]
// Each line: `<epoch ms> <cpu0 fields> <cpu1 fields> ... <pid>/<tid>=<utime+stime ticks>@<cpu>`,
// the core fields as in /proc/stat (user,nice,system,idle,iowait,irq,softirq,steal; cumulative
// ticks, so read differences) and one entry per thread of every pid listed in the pids file
// (whitespace-separated; read again at every sample, so it can be written once the bench has
// started its proxies, e.g. `pgrep -f 'build.tmp/src/cli/main.js|baseline-proxy.js'`). Node
// names none of its threads, so tell V8's helpers from the main thread (tid = pid) and from
// worker threads (the SQLite checkpointer starts last) by their ids. Stop it with a signal.
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';

const [out, pidsFile, every = '10'] = process.argv.slice(2);
if (!out) throw new Error('usage: node bench/cpu-sampler.mjs <out-file> [pids-file] [interval-ms]');
const pids = () => {
  if (!pidsFile) return [];
  try {
    return readFileSync(pidsFile, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
};
let lines = [];
const flush = () => {
  if (lines.length) appendFileSync(out, `${lines.join('\n')}\n`);
  lines = [];
};
setInterval(() => {
  const cores = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu\d+ /.test(l))
    .map((l) => l.split(/\s+/).slice(1, 9).join(','));
  const threads = [];
  for (const pid of pids()) {
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // the process is gone
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        // Fields after the command name: state is field 3; utime 14, stime 15, processor 39.
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.push(`${pid}/${tid}=${Number(f[11]) + Number(f[12])}@${f[36]}`);
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  lines.push(`${Date.now()} ${cores.join(' ')} ${threads.join(' ')}`);
  if (lines.length >= 100) flush();
}, Number(every));
for (const s of ['SIGINT', 'SIGTERM'])
  process.once(s, () => {
    flush();
    process.exit(0);
  });

import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import autocannon, { type Options, type Result } from 'autocannon';

export const chatBody = (stream: boolean) =>
  JSON.stringify({
    model: 'bench/model',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Say hello in one short sentence.' },
    ],
    max_tokens: 64,
    temperature: 0.2,
    stream,
  });

export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The proxy's pid, to report how much of its core it used. */
  pid?: number;
}

export interface LoadResult {
  rps: number;
  ok: number;
  errors: number;
  non2xx: number;
  /** Client-side response times in ms, full precision (autocannon's histogram keeps whole ms). */
  p50: number;
  p99: number;
  /**
   * Paced runs only: the generator's own worst lateness, ms between a request's scheduled time
   * and its send. A large value means the load generator (this process: its GC, a busy core)
   * stalled, and the latencies of that moment say nothing about the proxy.
   */
  lagMaxMs?: number;
  /**
   * Paced runs only: the share of sends (%) made in the same timer turn as the send before them,
   * the generator catching up after a late timer. Those requests reach the target back to back
   * instead of 1/rate apart, and the second waits for the first wherever one is served at a time
   * (session 38: 20-28% of sends at 1,000 req/s).
   */
  burstPct?: number;
}

/**
 * One autocannon run, for `duration` seconds or, given `amount`, until that many requests are
 * answered; latencies are taken from its per-response event, not its histogram.
 */
export function cannon(
  t: Target,
  o: { stream: boolean; duration?: number; amount?: number; connections: number; overallRate?: number },
): Promise<LoadResult> {
  const times: number[] = [];
  const opts: Options = {
    url: `${t.url}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...t.headers },
    body: chatBody(o.stream),
    connections: o.connections,
    pipelining: 1,
    ...(o.amount ? { amount: o.amount } : { duration: o.duration }),
    timeout: 30,
    ...(o.overallRate ? { overallRate: o.overallRate } : {}),
  };
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err: Error | null, r: Result) => {
      if (err) return reject(err);
      times.sort((a, b) => a - b);
      resolve({
        rps: r['2xx'] / r.duration,
        ok: r['2xx'],
        errors: r.errors + r.timeouts,
        non2xx: r.non2xx,
        p50: pct(times, 0.5),
        p99: pct(times, 0.99),
      });
    });
    inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) times.push(ms);
    });
  });
}

/** The middle value (the mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * Time to first byte of streamed responses, one request at a time on a keep-alive connection,
 * measured with hrtime from sending the request to the first body bytes.
 */
export async function ttfb(t: Target, count: number): Promise<{ p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = chatBody(true);
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      times.push(await oneTtfb(t, body, agent));
    }
  } finally {
    agent.destroy();
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 0.5), p99: pct(times, 0.99) };
}

function oneTtfb(t: Target, body: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${t.url}/v1/chat/completions`);
    let start = 0n;
    let first = 0;
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...t.headers,
        },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`${t.name}: status ${res.statusCode}`));
        res.on('data', () => {
          if (!first) first = Number(process.hrtime.bigint() - start) / 1e6;
        });
        res.on('end', () => resolve(first));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    start = process.hrtime.bigint();
    req.end(body);
  });
}

/**
 * Opens `count` streaming requests at once and resolves when every one has received its first
 * bytes (the upstream then trickles the rest); `close()` drops them all.
 */
export async function openStreams(
  t: Target,
  count: number,
  timeoutMs: number,
): Promise<{ opened: number; close: () => void }> {
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const body = chatBody(true);
  const u = new URL(`${t.url}/v1/chat/completions`);
  const reqs: Array<ReturnType<typeof httpRequest>> = [];
  let opened = 0;
  let failed = 0;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const check = () => {
      if (opened + failed >= count) {
        clearTimeout(timer);
        resolve();
      }
    };
    for (let i = 0; i < count; i++) {
      const req = httpRequest(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            ...t.headers,
          },
        },
        (res) => {
          let seen = false;
          res.on('data', () => {
            if (!seen) {
              seen = true;
              opened++;
              check();
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', () => {
        failed++;
        check();
      });
      req.end(body);
      reqs.push(req);
    }
  });
  await done;
  return {
    opened,
    close: () => {
      for (const r of reqs) r.destroy();
      agent.destroy();
    },
  };
}

/**
 * Open-loop load at a steady rate: one request every 1/rate s, whatever the responses do, on a
 * keep-alive pool. autocannon's `overallRate` instead lets each connection send its per-second
 * quota back to back and then wait for the next second, i.e. bursts at full speed; this pacing
 * is what "added latency at 1,000 req/s" means.
 *
 * The generator sleeps between sends (a 1 ms timer, all requests due by then sent at once)
 * instead of spinning: a spinning generator shares its core with the fake upstream, and the
 * scheduler lets the upstream's wake-up wait for the spinner's slice (direct-upstream p99 2-9 ms
 * against 0.5-1 ms with a sleeping generator, both pinned to core 1). Latency counts from the
 * moment each request is written, not from its due time, so the timer's own lateness (up to a
 * millisecond, worse when the generator's core is busy) is not charged to the target. Sends never
 * wait for responses, so a stalled target is still charged for every request it delayed (no
 * coordinated omission); `lagMaxMs` is the generator's worst lateness. `samples`, when given,
 * receives every answered request as [epoch ms of its write (performance.timeOrigin-based, µs
 * precision), latency ms, status].
 *
 * It runs in a process of its own (`bench/paced-child.ts`, started per run, on this process's
 * cores): in the harness, after the saturation scenarios, the generator's heap went through a
 * mark-compact every ~3 s during the paced rounds (5-8 ms pauses plus incremental steps), each
 * one a stall charged to whichever target was being measured (session 13).
 */
export async function paced(
  t: Target,
  rate: number,
  seconds: number,
  samples?: Array<[number, number, number]>,
): Promise<LoadResult> {
  const got = await inChild<{ result: LoadResult; samples?: Array<[number, number, number]> }>({
    t,
    rate,
    seconds,
    samples: !!samples,
  });
  if (samples && got.samples) for (const x of got.samples) samples.push(x);
  return got.result;
}

/**
 * The same paced load, interleaved: `slices` slices of `sliceSeconds` at `rate` per target, the
 * targets in turn (direct upstream, baseline, gateway, direct upstream, ...), so a stall of the
 * machine that lasts seconds lands on each target alike instead of deciding one target's round;
 * each target's percentiles are over all its slices. One generator process for the whole run;
 * for several rounds, `PacedGenerator` keeps one (warm) process and its pools across them.
 */
export async function interleaved(
  targets: Target[],
  rate: number,
  sliceSeconds: number,
  slices: number,
): Promise<LoadResult[]> {
  return (await inChild<{ results: LoadResult[] }>({ targets, rate, sliceSeconds, slices })).results;
}

/**
 * A paced generator process kept across interleaved rounds, each target on one keep-alive pool
 * for all of them. A generator started per round measured its own youth: in every round's first
 * slice, all of that second and for every target alike, the direct upstream had 109-343
 * requests over 1.2 ms against 2-45 in its later slices (session 32; one unmeasured 0.5 s slice
 * per target first did not change it), its code being compiled and its young heap growing on
 * the core it shares with the upstream. Run one round to warm it, then the measured ones.
 */
export class PacedGenerator {
  private constructor(private readonly child: ChildProcess) {}
  /** The generator process's pid (tests). */
  get pid(): number | undefined {
    return this.child.pid;
  }
  private pending?: { resolve: (r: LoadResult[]) => void; reject: (e: Error) => void };

  static open(): PacedGenerator {
    const child = fork(join(import.meta.dirname, 'paced-child.ts'), ['--serve'], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const gen = new PacedGenerator(child);
    child.on('message', (m: { results: LoadResult[] }) => {
      const p = gen.pending;
      gen.pending = undefined;
      p?.resolve(m.results);
    });
    const fail = (err: Error) => {
      const p = gen.pending;
      gen.pending = undefined;
      p?.reject(err);
    };
    child.on('error', fail);
    child.on('exit', (code, signal) => fail(new Error(`paced generator exited with ${code ?? signal}`)));
    return gen;
  }

  /** One interleaved round (see `interleaved()`), on the pools the earlier rounds opened. */
  interleaved(targets: Target[], rate: number, sliceSeconds: number, slices: number): Promise<LoadResult[]> {
    if (this.pending) throw new Error('one round at a time');
    if (!this.child.connected) return Promise.reject(new Error('paced generator has exited'));
    return new Promise<LoadResult[]>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.send({ targets, rate, sliceSeconds, slices }, (err) => {
        if (!err || this.pending?.reject !== reject) return;
        this.pending = undefined;
        reject(err);
      });
    });
  }

  /** Lets the generator exit (it closes its pools when the channel goes). */
  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

async function inChild<T>(arg: object): Promise<T> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'paced-child.ts'), JSON.stringify(arg)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`paced generator exited with ${code}`);
  return JSON.parse(out) as T;
}

/** `paced()`'s generator itself, in the calling process (the child runs it). */
export async function pacedHere(
  t: Target,
  rate: number,
  seconds: number,
  samples?: Array<[number, number, number]>,
): Promise<LoadResult> {
  const gen = new PacedTarget(t);
  const start = process.hrtime.bigint();
  await gen.slice(rate, seconds, samples);
  const result = gen.result(Number(process.hrtime.bigint() - start) / 1e9);
  gen.close();
  return result;
}

/**
 * `interleaved()`'s generator, in the calling process: `slices` slices of `sliceSeconds` per
 * target, the targets taken in turn (a, b, c, a, b, c, ...), each slice's requests answered
 * before the next slice starts.
 */
export async function interleavedHere(
  targets: Target[],
  rate: number,
  sliceSeconds: number,
  slices: number,
  pools?: Map<string, PacedTarget>,
): Promise<LoadResult[]> {
  const slowDir = process.env.BENCH_SLOW_DIR;
  // Made here, so a run with a fresh directory does not die at its first round's end.
  if (slowDir) mkdirSync(slowDir, { recursive: true });
  const slow: SlowRequest[] | undefined = slowDir ? [] : undefined;
  const keys = targets.map((t) => `${t.name} ${t.url} ${JSON.stringify(t.headers)}`);
  if (new Set(keys).size !== keys.length) throw new Error('the same target twice in one round');
  const gens = targets.map((t, k) => {
    const key = keys[k]!;
    let g = pools?.get(key);
    if (!g) {
      g = new PacedTarget(t);
      pools?.set(key, g);
    }
    return g;
  });
  for (const [k, g] of gens.entries()) g.round(slow, k);
  const busy = gens.map(() => 0);
  /** With BENCH_SLOW_DIR: each slice's [target index, `monoMs()` at its start]. */
  const starts: Array<[number, number]> = [];
  // BENCH_PAUSE_IDLE=1 (a diagnostic): every proxy but the one whose slice it is is stopped
  // (SIGSTOP) and resumed for its own slice, so neither proxy's background work (GC helper
  // threads, timers) runs during the other's slice on the core they share. Session 29: the
  // gateway's stalls remained with it (its own memory-reducing GC), the baseline's went.
  const pause = process.env.BENCH_PAUSE_IDLE === '1';
  const pids = targets.map((t) => t.pid);
  const signal = (pid: number | undefined, sig: NodeJS.Signals) => {
    try {
      if (pid) process.kill(pid, sig);
    } catch {
      // the process is gone; the run reports its errors
    }
  };
  const resumeAll = () => {
    for (const pid of pids) signal(pid, 'SIGCONT');
  };
  if (pause) process.once('exit', resumeAll);
  try {
    for (let i = 0; i < slices * gens.length; i++) {
      const k = i % gens.length;
      if (pause) {
        for (let j = 0; j < pids.length; j++) if (j !== k) signal(pids[j], 'SIGSTOP');
        signal(pids[k], 'SIGCONT');
      }
      const s = process.hrtime.bigint();
      if (slow) starts.push([k, Math.round(monoMs())]);
      await gens[k]!.slice(rate, sliceSeconds);
      busy[k]! += Number(process.hrtime.bigint() - s) / 1e9;
    }
  } finally {
    if (pause) {
      resumeAll();
      process.off('exit', resumeAll);
    }
  }
  if (slowDir && slow) {
    // Each slow request as [target index, monoMs() when sent, latency ms, 1 if it went on a
    // reused keep-alive socket], to lay beside what the processes recorded (bench/loop-probe.mjs),
    // and each slice's start, to tell a slice's first requests from the rest.
    const file = join(slowDir, `slow-${Date.now()}-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ targets: targets.map((t) => t.name), slow, starts }));
  }
  const results = gens.map((g, k) => g.result(busy[k]!));
  if (!pools) for (const g of gens) g.close();
  return results;
}

/**
 * The system's monotonic clock in ms (CLOCK_MONOTONIC, since boot): the clock of every process
 * on the machine alike, unlike `performance.timeOrigin + now()`, whose origin each process reads
 * off the wall clock at its start (two processes' readings of one moment were ~0.1 ms apart in
 * session 39). BENCH_SLOW_DIR's times and x-bench-sent are on it (wall-clock ms before session 39).
 */
export const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * A request `BENCH_SLOW_DIR` recorded: its target's index in the round, `monoMs()` when it was
 * sent (its x-bench-sent), its latency (ms), 1 if it went on a reused keep-alive socket, and
 * `monoMs()` when its answer's end was read (absent before session 39).
 */
export type SlowRequest = [target: number, sentMs: number, ms: number, reused: number, doneMs?: number];

/** Open-loop sends to one target on its own keep-alive pool; latencies kept across a round's slices. */
export class PacedTarget {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly body = chatBody(false);
  private readonly u: URL;
  private readonly headers: Record<string, string | number>;
  private readonly times: number[] = [];
  private errors = 0;
  private non2xx = 0;
  private lagMaxMs = 0;
  private burstSends = 0;
  /** Interleaved rounds with BENCH_SLOW_DIR: where requests over `slowMs` are recorded, as `index`. */
  private slow?: SlowRequest[];
  private index = 0;
  /** Latency over which `slow` records a request (ms): BENCH_SLOW_MS, read at each round's start. */
  private slowMs = 30;

  constructor(t: Target) {
    this.u = new URL(`${t.url}/v1/chat/completions`);
    this.headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(this.body),
      ...t.headers,
    };
  }

  private send(samples?: Array<[number, number, number]>): Promise<void> {
    const { u, agent, headers } = this;
    return new Promise<void>((resolve) => {
      let from = 0n;
      let wall = 0;
      // With BENCH_SLOW_DIR the send time rides along, so a probe in the proxy
      // (LOOP_PROBE_REQ_MS in bench/loop-probe.mjs) can tell arrival delay from handling time;
      // it is the body's `user` too, which both proxies pass on to the upstream, so a probe
      // there (LOOP_PROBE_TRACE) can tell which upstream request is for which of ours.
      const sentAt = this.slow ? monoMs() : 0;
      const stamp = sentAt.toFixed(3);
      const body = this.slow ? `${this.body.slice(0, -1)},"user":"${stamp}"}` : this.body;
      const h = this.slow
        ? { ...headers, 'x-bench-sent': stamp, 'content-length': Buffer.byteLength(body) }
        : headers;
      const req = httpRequest(
        { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: h },
        (res) => {
          res.resume();
          res.on('end', () => {
            const ms = Number(process.hrtime.bigint() - from) / 1e6;
            if (res.statusCode === 200) this.times.push(ms);
            else this.non2xx++;
            if (this.slow && ms > this.slowMs)
              this.slow.push([
                this.index,
                // To the µs: bench/timeline.ts joins it with the stamp the proxies and the
                // upstream saw (x-bench-sent, three decimals), and reads the answer's end
                // on the same clock.
                Number(stamp),
                Math.round(ms * 1000) / 1000,
                req.reusedSocket ? 1 : 0,
                Number(monoMs().toFixed(3)),
              ]);
            samples?.push([wall, ms, res.statusCode ?? 0]);
            resolve();
          });
        },
      );
      req.on('error', () => {
        this.errors++;
        resolve();
      });
      from = process.hrtime.bigint();
      if (samples) wall = performance.timeOrigin + performance.now();
      req.end(body);
    });
  }

  /** `rate` req/s for `seconds`, sleeping on a 1 ms timer between sends; resolves once all are answered. */
  async slice(rate: number, seconds: number, samples?: Array<[number, number, number]>): Promise<void> {
    const total = Math.round(rate * seconds);
    const start = process.hrtime.bigint();
    const interval = 1e9 / rate;
    let sent = 0;
    const inflight: Array<Promise<void>> = [];
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = process.hrtime.bigint();
        let thisTurn = 0;
        while (sent < total && start + BigInt(Math.round(sent * interval)) <= now) {
          if (thisTurn++ > 0) this.burstSends++;
          const due = start + BigInt(Math.round(sent * interval));
          const lag = Number(now - due) / 1e6;
          if (lag > this.lagMaxMs) this.lagMaxMs = lag;
          inflight.push(this.send(samples));
          sent++;
        }
        if (sent >= total) resolve();
        else setTimeout(tick, 0);
      };
      tick();
    });
    await Promise.all(inflight);
  }

  /** Starts a round: what earlier rounds measured is dropped; the pool's sockets stay. */
  round(slow: SlowRequest[] | undefined, index: number): void {
    this.times.length = 0;
    this.errors = 0;
    this.non2xx = 0;
    this.lagMaxMs = 0;
    this.burstSends = 0;
    this.slow = slow;
    this.index = index;
    this.slowMs = Number(process.env.BENCH_SLOW_MS ?? 30);
  }

  close(): void {
    this.agent.destroy();
  }

  /** Totals over the round's slices; `elapsed`: seconds spent sending to this target. */
  result(elapsed: number): LoadResult {
    const times = this.times.sort((a, b) => a - b);
    return {
      rps: times.length / elapsed,
      ok: times.length,
      errors: this.errors,
      non2xx: this.non2xx,
      p50: pct(times, 0.5),
      p99: pct(times, 0.99),
      lagMaxMs: this.lagMaxMs,
      // Every send of the round has been answered or failed by now (each slice waits for all).
      burstPct: (100 * this.burstSends) / Math.max(1, times.length + this.errors + this.non2xx),
    };
  }
}

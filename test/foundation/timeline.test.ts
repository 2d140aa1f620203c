import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PacedTarget, type SlowRequest } from '../../bench/load.js';
import { benchServer, cleanEnv, type Proc, startNode } from '../../bench/procs.js';
import {
  hops,
  longestQuiet,
  parseTraces,
  processKind,
  report,
  type ServerTrace,
  stateTimes,
  threadStates,
} from '../../bench/timeline.js';

// bench/loop-probe.mjs's trace mode (LOOP_PROBE_TRACE=1) in the bench's baseline proxy: every
// request it serves is recorded with its hops, and the upstream request it makes carries the
// incoming request's x-bench-sent, also when requests overlap in the proxy (the upstream here
// answers them out of order), so bench/timeline.ts can join the two processes' records.
describe('bench: the probe traces each request through a proxy', () => {
  let upstream: Server;
  let proxy: Proc;
  let dir = '';
  /** What the upstream saw: the forwarded stamp and the one in the body, per request. */
  const seen: Array<{ header: string | undefined; body: string }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-timeline-'));
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        const user = (JSON.parse(body) as { user: string }).user;
        seen.push({ header: req.headers['x-bench-sent'] as string | undefined, body: user });
        // Later requests first: the proxy holds several at once and they finish out of order.
        setTimeout(
          () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}'),
          40 - (seen.length % 8) * 5,
        );
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await startNode({
      name: 'baseline',
      args: benchServer('bench/baseline-proxy.ts', false),
      env: {
        ...cleanEnv({ PORT: '0', UPSTREAM_URL: `${url}/v1` }),
        NODE_OPTIONS: '--import ./bench/loop-probe.mjs',
        LOOP_PROBE_DIR: dir,
        LOOP_PROBE_TRACE: '1',
      },
      ready: /listening on (http:\S+)/,
    });
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
    await new Promise((r) => upstream.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('records every request and passes its stamp to the upstream request it makes', async () => {
    // The bench's own generator in its BENCH_SLOW_DIR mode, every request recorded: 24 sends
    // 5 ms apart, so the proxy holds several at once.
    const gen = new PacedTarget({ name: 'baseline', url: proxy.url, headers: {} });
    const slow: SlowRequest[] = [];
    process.env.BENCH_SLOW_MS = '0';
    try {
      gen.round(slow, 0);
    } finally {
      delete process.env.BENCH_SLOW_MS;
    }
    await gen.slice(200, 0.12);
    gen.close();
    expect(gen.result(0.12).ok).toBe(24);
    expect(slow).toHaveLength(24);
    // Each answer's end is read on the stamp's clock, the latency after it: the stamp is taken
    // just before the request is made (the first one, in a cold process, can take ms to make).
    const gaps = slow.map(([k, sent, ms, , done]) => {
      expect(k).toBe(0);
      return done! - sent - ms;
    });
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(0);
    expect(gaps.sort((a, b) => a - b)[12]).toBeLessThan(1);
    const stamps = slow.map(([, sent]) => sent.toFixed(3));
    // Every upstream request carried the stamp of the incoming request it was made for.
    expect(seen).toHaveLength(stamps.length);
    for (const s of seen) expect(s.header).toBe(s.body);
    await proxy.stop(); // the probe appends what it buffered on exit
    const logs = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'));
    const mine = logs.filter((t) => processKind(t.slice(0, t.indexOf('\n'))) === 'baseline');
    expect(mine).toHaveLength(1);
    const traces = parseTraces(mine[0]!);
    expect([...traces.keys()].sort()).toEqual([...stamps].sort());
    // The proxy's clock is the generator's (the system's monotonic one): each request arrived
    // after it was sent and finished before the generator read its end.
    const done = new Map(slow.map(([, sent, , , end]) => [sent.toFixed(3), end!]));
    for (const [stamp, t] of traces) {
      expect(t.arrive).toBeGreaterThan(Number(stamp));
      expect(t.finish).toBeLessThan(done.get(stamp)!);
      expect(t.send).toBeGreaterThanOrEqual(t.arrive);
      expect(t.headers).toBeGreaterThan(t.send + 4); // the upstream held each one 5-40 ms
      expect(t.end).toBeGreaterThanOrEqual(t.headers);
      expect(t.finish).toBeGreaterThanOrEqual(t.end);
    }
  }, 60_000);
});

describe('bench: the probe keeps what a process without a signal handler served last', () => {
  // The fake upstream has no SIGTERM handler: killed by the bench, it would die without 'exit',
  // and the probe's buffer (appended once a second) with it: the last requests of a run.
  it('appends its buffered traces when SIGTERM kills the process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-timeline-up-'));
    try {
      const up = await startNode({
        name: 'fake-upstream',
        args: benchServer('bench/fake-upstream.ts', false),
        env: {
          ...cleanEnv({ PORT: '0' }),
          NODE_OPTIONS: '--import ./bench/loop-probe.mjs',
          LOOP_PROBE_DIR: dir,
          LOOP_PROBE_TRACE: '1',
        },
        ready: /listening on (http:\S+)/,
      });
      const stamp = '123.456';
      const res = await fetch(`${up.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-bench-sent': stamp },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      await up.stop(); // at once: the line is still in the buffer
      const logs = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'));
      const mine = logs.find((t) => processKind(t.slice(0, t.indexOf('\n'))) === 'upstream');
      expect(mine).toBeDefined();
      expect([...parseTraces(mine!).keys()]).toEqual([stamp]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('bench/timeline: the hops of a request', () => {
  const up: ServerTrace = { arrive: 100.3, send: 0, headers: 0, end: 0, finish: 100.4 };
  const px: ServerTrace = { arrive: 100.1, send: 100.2, headers: 100.6, end: 100.6, finish: 100.7 };

  it('splits a proxied request into seven hops and a direct one into three', () => {
    const h = hops(100, 101.5, up, px, false)!;
    expect(Object.keys(h)).toEqual(['in', 'route', 'out', 'upstream', 'back', 'reply', 'return']);
    const r = Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Number(v.toFixed(3))]));
    expect(r).toEqual({ in: 0.1, route: 0.1, out: 0.1, upstream: 0.1, back: 0.2, reply: 0.1, return: 0.8 });
    const d = hops(100.2, 100.6, up, undefined, true)!;
    expect(Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Number(v.toFixed(3))]))).toEqual({
      in: 0.1,
      upstream: 0.1,
      return: 0.2,
    });
    expect(hops(100, 101, undefined, px, false)).toBeUndefined();
    expect(hops(100, 101, up, undefined, false)).toBeUndefined();
  });

  it('names the slow requests’ longest hop and counts what no server recorded', () => {
    const upstream = new Map<string, ServerTrace>();
    const proxy = new Map<string, ServerTrace>();
    const slow: SlowRequest[] = [];
    for (let i = 0; i < 10; i++) {
      const sent = 1000 + i * 10;
      // Request 7 waits 3 ms before the proxy sees it; the rest take 0.6 ms end to end.
      const late = i === 7 ? 3 : 0;
      proxy.set(sent.toFixed(3), {
        arrive: sent + 0.1 + late,
        send: sent + 0.2 + late,
        headers: sent + 0.4 + late,
        end: sent + 0.4 + late,
        finish: sent + 0.5 + late,
      });
      upstream.set(sent.toFixed(3), {
        arrive: sent + 0.25 + late,
        send: 0,
        headers: 0,
        end: 0,
        finish: sent + 0.35 + late,
      });
      slow.push([0, sent, 0.6 + late, 1, sent + 0.6 + late]);
    }
    // Sent 0.2 ms after request 7 (the generator catching up), 1 ms late on its way in and
    // 1 ms late on the upstream's answer's way back.
    const pair = 1070.2;
    proxy.set(pair.toFixed(3), {
      arrive: pair + 1.1,
      send: pair + 1.2,
      headers: pair + 2.4,
      end: pair + 2.4,
      finish: pair + 2.5,
    });
    upstream.set(pair.toFixed(3), { arrive: pair + 1.25, send: 0, headers: 0, end: 0, finish: pair + 1.35 });
    slow.push([0, pair, 2.6, 1, pair + 2.6]);
    slow.push([0, 2000, 1, 1]); // no server has it
    const [r] = report(
      { upstream, proxies: new Map([['baseline', proxy]]) },
      [{ targets: ['baseline'], slow, starts: [] }],
      1.5,
      1,
    );
    expect(r!.joined).toBe(11);
    expect(r!.missing).toBe(1);
    expect(r!.outOfOrder).toBe(0);
    expect(r!.slow).toBe(2);
    expect(r!.longest.in).toBe(2);
    expect(r!.excess.in).toBeCloseTo(2, 6); // (3 + 1) / 2
    expect(r!.excess.back).toBeCloseTo(0.5, 6);
    expect(r!.excess.route).toBeCloseTo(0, 6);
    expect(r!.lateHops.slice(0, 3)).toEqual([0, 1, 1]);
    expect(r!.paired).toBe(1);
    expect(r!.slowest.map((x) => x.sent)).toEqual([1070]);
    // The proxy did nothing while the pair waited to reach it, nor while its answer waited; while
    // request 7 waited it handled the pair: busy, not silent.
    expect(r!.late).toEqual({ in: 2, out: 0, back: 1, return: 0 });
    expect(r!.silent).toEqual({ in: 1, out: 0, back: 1, return: 0 });
    // A hop read negative (a join gone wrong) is counted.
    upstream.set('1000.000', { ...upstream.get('1000.000')!, arrive: 999 });
    expect(
      report(
        { upstream, proxies: new Map([['baseline', proxy]]) },
        [{ targets: ['baseline'], slow, starts: [] }],
        1.5,
      )[0]!.outOfOrder,
    ).toBe(1);
  });

  it('finds the longest stretch without an event inside a window', () => {
    const t = [1, 2, 2.5, 6, 9];
    expect(longestQuiet(t, 2, 9)).toBeCloseTo(3.5, 9); // 2.5 -> 6
    expect(longestQuiet(t, 6.5, 8.5)).toBeCloseTo(2, 9); // nothing inside
    expect(longestQuiet(t, 0, 1.5)).toBeCloseTo(1, 9); // from the start to the first
    expect(longestQuiet([], 3, 4)).toBeCloseTo(1, 9);
  });

  it('reads what a thread was doing from the scheduler record', () => {
    const sw = (t: string, prev: number, state: string, next: number) =>
      `[000] ${t}: sched:sched_switch: prev_comm=a prev_pid=${prev} prev_prio=120 prev_state=${state} ==> next_comm=b next_pid=${next} next_prio=120`;
    const wake = (t: string, pid: number) =>
      `[000] ${t}: sched:sched_wakeup: comm=b pid=${pid} prio=120 target_cpu=000`;
    const spans = threadStates(
      [
        wake('1.000000', 7), // state unknown before: no span yet
        sw('1.000500', 3, 'S', 7), // runs
        sw('1.002000', 7, 'S', 0), // sleeps
        wake('1.005000', 7), // woken: runnable
        wake('1.005100', 7), // a second wake-up changes nothing
        sw('1.006000', 9, 'R', 7), // runs
        sw('1.006500', 7, 'R+', 9), // preempted: runnable
        sw('1.007000', 9, 'S', 7),
        sw('1.007100', 7, 'S', 0),
      ],
      new Set([7]),
    ).get(7)!;
    expect(spans.map((x) => [x.state, Number(x.from.toFixed(3)), Number(x.to.toFixed(3))])).toEqual([
      ['runnable', 1000, 1000.5],
      ['running', 1000.5, 1002],
      ['asleep', 1002, 1005],
      ['runnable', 1005, 1006],
      ['running', 1006, 1006.5],
      ['runnable', 1006.5, 1007],
      ['running', 1007, 1007.1],
    ]);
    const t = stateTimes(spans, 1001, 1008);
    expect(t.running).toBeCloseTo(1 + 0.5 + 0.1, 6);
    expect(t.asleep).toBeCloseTo(3, 6);
    expect(t.runnable).toBeCloseTo(1.5, 6);
    expect(t.unknown).toBeCloseTo(0.9, 6); // after the last event
  });
});

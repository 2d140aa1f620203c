import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { median, PacedGenerator, PacedTarget, type Target } from '../../bench/load.js';

// The bench's paced generator kept across rounds (`npm run bench`'s latency rounds): each round
// is measured on its own, every request of it answered and counted, and a target's keep-alive
// connections carry over from one round to the next, so later rounds open none.
describe('bench: PacedGenerator', () => {
  let server: Server;
  let url = '';
  let sockets = new Set<unknown>();
  let requests = 0;
  let failNext = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      sockets.add(req.socket);
      requests++;
      req.resume();
      req.on('end', () => {
        const status = failNext > 0 ? 500 : 200;
        if (failNext > 0) failNext--;
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('measures each round alone and keeps the pools between rounds', async () => {
    const gen = PacedGenerator.open();
    try {
      const targets: Target[] = [
        { name: 'a', url, headers: {} },
        { name: 'b', url, headers: { authorization: 'Bearer x' } },
      ];
      // 200 req/s for 0.25 s: 50 requests per slice, two slices per target; the first two of
      // target a's answers are 500s.
      failNext = 2;
      const first = await gen.interleaved(targets, 200, 0.25, 2);
      expect(first[0]).toMatchObject({ ok: 98, non2xx: 2, errors: 0 });
      expect(first[1]).toMatchObject({ ok: 100, non2xx: 0, errors: 0 });
      expect(requests).toBe(200);
      const firstSockets = sockets;
      sockets = new Set();

      failNext = 3;
      const second = await gen.interleaved(targets, 200, 0.25, 2);
      // Round two counts only its own requests: its three failures, not round one's two.
      expect(second[0]).toMatchObject({ ok: 97, non2xx: 3, errors: 0 });
      expect(second[1]).toMatchObject({ ok: 100, non2xx: 0, errors: 0 });
      expect(second[0]!.p99).toBeGreaterThan(0);
      expect(requests).toBe(400);
      // Round one's keep-alive sockets served round two (a generator per round closes them).
      expect([...sockets].some((s) => firstSockets.has(s))).toBe(true);
    } finally {
      gen.close();
    }
  }, 30_000);

  it('rejects the round in progress when its process dies, and exits once closed', async () => {
    const dying = PacedGenerator.open();
    const round = dying.interleaved([{ name: 'a', url, headers: {} }], 100, 5, 1);
    await new Promise((r) => setTimeout(r, 500));
    process.kill(dying.pid!, 'SIGKILL');
    await expect(round).rejects.toThrow(/paced generator exited with SIGKILL/);

    const closing = PacedGenerator.open();
    const pid = closing.pid!;
    // Mid-round: closing stops the round too, the process does not stay to finish it.
    void closing.interleaved([{ name: 'a', url, headers: {} }], 100, 20, 1).catch(() => {});
    await new Promise((r) => setTimeout(r, 500));
    closing.close();
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toBe(false);
  }, 30_000);

  it('refuses a round once closed instead of waiting forever, and closes twice quietly', async () => {
    const gen = PacedGenerator.open();
    gen.close();
    gen.close();
    await expect(gen.interleaved([{ name: 'a', url, headers: {} }], 100, 0.1, 1)).rejects.toThrow(
      /paced generator has exited/,
    );
  });

  it('counts the sends it makes back to back after a late timer, and only those', async () => {
    const gen = new PacedTarget({ name: 'a', url, headers: {} });
    try {
      // 50 req/s: a send every 20 ms, far above the 1 ms timer, so an undisturbed slice sends
      // one request per timer turn.
      gen.round(undefined, 0);
      await gen.slice(50, 0.4);
      const calm = gen.result(0.4);
      expect(calm.ok).toBe(20);
      // On a machine busy with other test files the timer itself can fire a send interval late:
      // then sends do go out back to back, and counting them is right. Only a slice whose timer
      // was never that late must count (almost) none.
      if ((calm.lagMaxMs ?? 0) < 20) expect(calm.burstPct).toBeLessThan(10);
      else expect(calm.burstPct).toBeGreaterThan(0);

      // The same slice with the generator's thread held for 100 ms after its first send: the
      // five sends due meanwhile go out together in the next turn (four of them back to back).
      gen.round(undefined, 0);
      const slice = gen.slice(50, 0.4);
      const until = performance.now() + 100;
      while (performance.now() < until) {
        // the generator's own stall
      }
      await slice;
      const late = gen.result(0.4);
      expect(late.ok).toBe(20);
      expect(late.burstPct).toBeGreaterThanOrEqual(15);
      expect(late.lagMaxMs).toBeGreaterThanOrEqual(80);
    } finally {
      gen.close();
    }
  });
});

// The one median every bench tool reports (rounds' ratios, paced p99s, A/B CPU per request).
describe('bench: median', () => {
  it('takes the middle value, the mean of the middle two for an even count, unsorted input left alone', () => {
    const odd = [3, 1, 2];
    expect(median(odd)).toBe(2);
    expect(odd).toEqual([3, 1, 2]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { startCheckpointer } from '../../src/store/sqlite-checkpointer.js';

describe('SQLite WAL checkpoints', () => {
  it('run in a worker: the main connection never checkpoints, yet the WAL is emptied', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-ckpt-'));
    const d = openDatabase(`sqlite:${join(dir, 't.db')}`);
    try {
      const conn = d.sqlite!;
      expect(conn.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      conn.exec('create table t (a text)');
      const ins = conn.prepare('insert into t values (?)');
      for (let i = 0; i < 1500; i++) ins.run('x'.repeat(2000));
      // The WAL header's checkpoint sequence (bytes 12-15) grows each time a commit restarts the
      // WAL, which it does only once every frame was checkpointed: here, only by the worker.
      const seq = () => readFileSync(join(dir, 't.db-wal')).readUInt32BE(12);
      const first = seq();
      await expect
        .poll(
          () => {
            ins.run('y');
            return seq();
          },
          { timeout: 10_000, interval: 200 },
        )
        .toBeGreaterThan(first);
    } finally {
      await d.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite checkpoint worker lifetime', () => {
  const setup = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-ckpt-'));
    const file = join(dir, 't.db');
    const conn = new SQLite(file);
    conn.pragma('journal_mode = WAL');
    conn.exec('create table t (a text)');
    const ins = conn.prepare('insert into t values (?)');
    const write = (n: number) =>
      conn.transaction(() => {
        for (let i = 0; i < n; i++) ins.run('x'.repeat(100));
      })();
    return { dir, file, conn, write, done: () => rmSync(dir, { recursive: true, force: true }) };
  };

  it('runs only while there are writes to checkpoint: starts after enough changes, exits when idle', async () => {
    const db = setup();
    // 20 idle checks of 50 ms: a worker lives ~1 s, which a 20 ms poll cannot miss however
    // loaded the machine.
    const c = startCheckpointer(db.conn, db.file, { intervalMs: 50, startAfterChanges: 100, idleChecks: 20 });
    try {
      expect(db.conn.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      db.write(50);
      await new Promise((r) => setTimeout(r, 300));
      expect(c.running).toBe(false);
      db.write(60);
      await expect.poll(() => c.running, { timeout: 5000, interval: 20 }).toBe(true);
      await expect.poll(() => c.running, { timeout: 5000, interval: 20 }).toBe(false);
      // Idle exit is not a failure: the main connection still leaves checkpoints to the worker.
      expect(db.conn.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      db.write(120);
      await expect.poll(() => c.running, { timeout: 5000, interval: 20 }).toBe(true);
    } finally {
      await c.stop();
      expect(c.running).toBe(false);
      db.conn.close();
      db.done();
    }
  });

  it('turns automatic checkpoints back on when the worker fails', async () => {
    const db = setup();
    const c = startCheckpointer(db.conn, join(db.dir, 'missing', 'nope.db'), {
      intervalMs: 50,
      startAfterChanges: 10,
      idleChecks: 3,
    });
    try {
      db.write(20);
      await expect
        .poll(() => db.conn.pragma('wal_autocheckpoint', { simple: true }), { timeout: 5000, interval: 20 })
        .toBe(1000);
      await expect.poll(() => c.running, { timeout: 5000, interval: 20 }).toBe(false);
      // And it stays down: more than enough writes to start a worker, then ten poll intervals
      // watched every 5 ms (a worker that respawned would run for tens of ms before failing).
      db.write(50);
      let seen = false;
      for (const end = Date.now() + 500; Date.now() < end; ) {
        seen ||= c.running;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(seen).toBe(false);
      expect(db.conn.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    } finally {
      await c.stop();
      db.conn.close();
      db.done();
    }
  });
});

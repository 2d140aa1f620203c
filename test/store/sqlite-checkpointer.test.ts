import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';

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

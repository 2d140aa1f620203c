import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { openDatabase } from '../../src/store/database.js';

// better-sqlite3 builds SQLite with a 16 MB page cache, which the request log's inserts fill
// (~17 MB of resident memory under load, docs/performance.md Session 11). The gateway sets its own.
describe('SQLite page cache', () => {
  const withDb = async (opts: Parameters<typeof openDatabase>[1], check: (size: unknown) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-cache-'));
    const d = openDatabase(`sqlite:${join(dir, 't.db')}`, opts);
    try {
      check(d.sqlite!.pragma('cache_size', { simple: true }));
    } finally {
      await d.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('is 2 MB by default, not the 16 MB better-sqlite3 compiles in', async () => {
    await withDb({}, (size) => expect(size).toBe(-2048));
  });

  it('follows database.sqlite_cache_mb (MODELGATE_DATABASE_SQLITE_CACHE_MB)', async () => {
    const config = loadConfig({ MODELGATE_DATABASE_SQLITE_CACHE_MB: '24' });
    expect(config.database.sqlite_cache_mb).toBe(24);
    await withDb({ sqliteCacheMb: config.database.sqlite_cache_mb }, (size) => expect(size).toBe(-24 * 1024));
    expect(loadConfig({}).database.sqlite_cache_mb).toBe(2);
    expect(() => loadConfig({ MODELGATE_DATABASE_SQLITE_CACHE_MB: '0' })).toThrow(/sqlite_cache_mb/);
  });
});

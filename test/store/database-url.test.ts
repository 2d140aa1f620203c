import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';

/**
 * The configuration refuses a database URL of another scheme (src/config/load-config.ts);
 * `openDatabase` refuses it too, for a caller that builds its settings in code. Read as a SQLite
 * path, `mysql://u:pw@h/x` made the folders `mysql:/u:pw@h/` and an empty database `x`.
 */
describe('openDatabase', () => {
  it('refuses a URL of a scheme it does not open, creating nothing and never echoing it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-dburl-'));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(() => openDatabase('mysql://u:pw1234@h/x')).toThrow(
        /^database\.url: mysql:\/\/ is not a database the gateway opens; use a postgres:\/\/ or postgresql:\/\/ URL, or a SQLite file path$/,
      );
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens a SQLite path written after sqlite: or sqlite://, in any case', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-dburl-'));
    try {
      for (const url of [`sqlite:${dir}/a.db`, `sqlite://${dir}/b.db`, `SQLite://${dir}/c.db`]) {
        const d = openDatabase(url);
        await d.ping();
        await d.close();
      }
      expect(['a.db', 'b.db', 'c.db'].filter((f) => existsSync(join(dir, f)))).toEqual([
        'a.db',
        'b.db',
        'c.db',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

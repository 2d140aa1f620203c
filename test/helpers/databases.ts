import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Storage for one test gateway. SQLite by default (a fresh file); PostgreSQL when
 * TEST_DATABASE_URL is set (`npm run test:pg`), as a fresh database per call so test files
 * never see each other's rows.
 */
export const TEST_PG_URL = process.env.TEST_DATABASE_URL ?? '';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? '';
export const onPostgres = TEST_PG_URL !== '';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!onPostgres) {
    const dir = mkdtempSync(join(tmpdir(), 'mg-test-'));
    return { url: join(dir, 'modelgate.db'), drop: async () => {} };
  }
  const name = `mg_t_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(TEST_PG_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

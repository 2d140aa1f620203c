import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { expect, inject } from 'vitest';
import { dropDatabase, testDatabasePrefix } from './pg-run.js';

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
  // Named after the run (test/helpers/pg-run.ts), which drops what is left at its end and names
  // the test that made it, from the comment.
  const name = `${testDatabasePrefix(inject('pgRunTag'))}${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const { testPath, currentTestName } = expect.getState();
  const madeBy = `${testPath ? relative(process.cwd(), testPath) : 'a test'} (${currentTestName ?? 'a hook of the file'})`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`COMMENT ON DATABASE ${name} IS ${admin.escapeLiteral(madeBy)}`);
  } finally {
    await admin.end();
  }
  const u = new URL(TEST_PG_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      try {
        await dropDatabase(c, name);
      } finally {
        await c.end();
      }
    },
  };
}

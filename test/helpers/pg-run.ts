import pg from 'pg';
import type { TestProject } from 'vitest/node';

/**
 * Global setup of the test run. Under `npm run test:pg` it gives this run a tag that every
 * database `createTestDatabase` makes is named after, and at the end of the run drops whatever
 * database of the run is still there and fails the run naming the test that made it: a test that
 * starts a gateway and never closes it leaves its database on the server for good, one per CI
 * run. Runs of other checkouts on the same server carry other tags and are left alone.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    pgRunTag: string;
  }
}

export default function setup(project: TestProject) {
  const tag = Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
  project.provide('pgRunTag', tag);
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  return async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ datname: string; made_by: string | null }>(
        `SELECT datname, shobj_description(oid, 'pg_database') AS made_by FROM pg_database WHERE starts_with(datname::text, $1)`,
        [testDatabasePrefix(tag)],
      );
      for (const r of rows) await dropDatabase(admin, r.datname);
      if (rows.length > 0) {
        // Vitest reports an error thrown here but still exits 0: the exit code says it instead.
        console.error(
          `${rows.length} test database(s) left behind at the end of the run (dropped now): ${rows
            .map((r) => `${r.datname}, made by ${r.made_by ?? 'an unknown test'}`)
            .join('; ')}`,
        );
        process.exitCode = 1;
      }
    } finally {
      await admin.end();
    }
  };
}

/** Drops database `name` if it is there, ending its sessions first (WITH (FORCE), PostgreSQL 13+). */
export async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
}

/** The start of the name of every database of the run tagged `tag`. */
export function testDatabasePrefix(tag: string): string {
  return `mg_t_${tag}_`;
}

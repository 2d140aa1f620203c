import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

/** A loopback port nothing listens on (it did a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A database the start cannot reach is named as the database (its URL without the password),
 * with the connection error's code, exit 1: the bare `error: connect ECONNREFUSED ...` said
 * neither which connection failed nor that it was the start's migration step.
 */
describe('a start with the database unreachable', () => {
  for (const command of ['migrate', 'serve'])
    it(`${command} says it cannot connect to the database, without its password`, {
      timeout: 90_000,
    }, async () => {
      const port = await closedPort();
      const r = await runCli([command], {
        DATABASE_URL: `postgres://gateway:pa55-secret@127.0.0.1:${port}/modelgate`,
        MODELGATE_PORT: '0',
        MODELGATE_LOG_LEVEL: 'silent',
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `database: cannot connect to postgres://gateway@127.0.0.1:${port}/modelgate (ECONNREFUSED): `,
      );
      expect(r.stderr).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
      expect(r.stderr + r.stdout).not.toContain('pa55-secret');
    });
});

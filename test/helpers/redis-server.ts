import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

/**
 * A private redis-server on a free loopback port, without persistence, for tests that need a
 * Redis of their own whatever TEST_REDIS_URL says (tests that cut or freeze its connections).
 */
export interface PrivateRedis {
  url: string;
  /** Kills the server (SIGKILL, as a crash); a no-op when it is not running. */
  stop(): Promise<void>;
  /** Starts it again, empty, on the same port; resolves once it answers PING. */
  restart(): Promise<void>;
}

export async function startRedisServer(): Promise<PrivateRedis> {
  const port = await freePort();
  let child = await spawnRedis(port);
  const stop = () =>
    new Promise<void>((resolve) => {
      const c = child;
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    stop,
    async restart() {
      await stop();
      child = await spawnRedis(port);
    },
  };
}

async function spawnRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  for (let i = 0; !(await answers(port)); i++) {
    if (i > 200 || child.exitCode !== null) throw new Error(`redis-server on port ${port} did not start`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return child;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(port, '127.0.0.1');
    c.once('error', () => resolve(false));
    c.once('connect', () => c.write('PING\r\n'));
    c.once('data', (d) => {
      c.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
  });
}

import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy between a gateway and PostgreSQL that fails the way networks do, for tests of
 * what the gateway does when its database goes away:
 * - `down()` cuts every connection and refuses new ones until `up()`;
 * - `loseReplyTo(text)`: the next client message containing `text` reaches the server, which runs
 *   it (commits included), but its answer never comes back: once the server has said it is ready
 *   for the next query, both sides are cut. The client cannot tell whether its statement ran.
 * - `freeze()`: every connection open now goes silent, neither side cut (what reaches it is
 *   dropped, as a failover or a lost NAT entry leaves a connection); new connections work.
 * - `freezeAt(text)`: the connection whose next client message contains `text` goes silent at
 *   that message (it never reaches the server).
 */
export interface PgProxy {
  /** The PostgreSQL URL `url` rewritten to go through the proxy. */
  url: string;
  down(): void;
  up(): Promise<void>;
  freeze(): void;
  freezeAt(text: string): Promise<void>;
  loseReplyTo(text: string): Promise<void>;
  close(): Promise<void>;
}

/** PostgreSQL's ReadyForQuery message: 'Z', length 5, then the transaction status byte. */
const READY = Buffer.from([0x5a, 0, 0, 0, 5]);

export async function startPgProxy(target: string): Promise<PgProxy> {
  const t = new URL(target);
  const pairs = new Set<[Socket, Socket]>();
  const frozen = new WeakSet<[Socket, Socket]>();
  const freezing: Array<{ text: string; done: () => void }> = [];
  const armed: Array<{ text: string; done: () => void }> = [];
  let server: Server | undefined;

  const onClient = (client: Socket) => {
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    let doomed: (() => void) | undefined;
    const cut = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    upstream.connect(Number(t.port || 5432), t.hostname);
    client.on('data', (chunk) => {
      if (frozen.has(pair)) return;
      const f = freezing.findIndex((a) => chunk.includes(a.text));
      if (f >= 0) {
        frozen.add(pair);
        return freezing.splice(f, 1)[0]!.done();
      }
      if (!doomed) {
        const i = armed.findIndex((a) => chunk.includes(a.text));
        if (i >= 0) doomed = armed.splice(i, 1)[0]!.done;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (frozen.has(pair)) return;
      if (!doomed) return void client.write(chunk);
      // Swallowed; once the server is ready again, what the message asked for has run.
      if (chunk.includes(READY)) {
        cut();
        doomed();
      }
    });
  };

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer(onClient);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        server = s;
        resolve((s.address() as { port: number }).port);
      });
    });
  const port = await listen(0);
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);

  const closeServer = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      s.close(() => resolve());
    });

  const down = () => {
    void closeServer();
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };
  return {
    url: url.toString(),
    down,
    async up() {
      if (!server) await listen(port);
    },
    freeze() {
      for (const pair of pairs) frozen.add(pair);
    },
    freezeAt(text: string) {
      return new Promise<void>((done) => freezing.push({ text, done }));
    },
    loseReplyTo(text: string) {
      return new Promise<void>((done) => armed.push({ text, done }));
    },
    async close() {
      down();
      await closeServer();
    },
  };
}

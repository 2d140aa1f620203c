import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy between the gateway and a server (PostgreSQL, Redis) that fails the way networks
 * do, for tests of what the gateway does when that server goes away. pg-proxy.ts and
 * redis-proxy.ts are thin wrappers over it.
 * - `down()` cuts every connection and refuses new ones until `up()` (listening again on the
 *   same port);
 * - `severUpstream(true)`: new connections are accepted but cut at once, as a proxy or load
 *   balancer whose server behind it is gone does (the client connects, then its first command
 *   fails);
 * - `blackhole(true)`: new connections are accepted and then go silent (a proxy whose server
 *   stopped answering);
 * - `freeze()`: every connection open now goes silent, neither side cut (what reaches it is
 *   dropped, as a failover or a lost NAT entry leaves a connection); new connections work;
 * - `freezeAt(text)`: the connection whose next client chunk contains `text` goes silent at that
 *   chunk (it never reaches the server);
 * - `loseReplyTo(text, until)`: the next client chunk containing `text` reaches the server, which
 *   runs it, but its answer never comes back: once a server chunk contains `until` (the server
 *   saying it is done), both sides are cut. The client cannot tell whether its command ran.
 * `connections` counts the connections accepted so far.
 */
export interface TcpFaultProxy {
  /** The URL `target` rewritten to go through the proxy. */
  url: string;
  readonly connections: number;
  down(): void;
  up(): Promise<void>;
  severUpstream(on: boolean): void;
  blackhole(on: boolean): void;
  freeze(): void;
  freezeAt(text: string): Promise<void>;
  loseReplyTo(text: string, until: Buffer): Promise<void>;
  close(): Promise<void>;
}

export interface TcpFaultProxyOptions {
  /** The port when `target` names none (5432, 6379). */
  defaultPort: number;
  /**
   * Keep both sides half-open, so a frozen connection ignores a FIN too, as a dead network path
   * does: a client that only ends its side then waits forever. Without it a client's FIN closes
   * its side of the proxy, frozen or not.
   */
  halfOpen?: boolean;
}

type Pair = [client: Socket, upstream: Socket];

export async function startTcpFaultProxy(
  target: string,
  { defaultPort, halfOpen = false }: TcpFaultProxyOptions,
): Promise<TcpFaultProxy> {
  const t = new URL(target);
  const pairs = new Set<Pair>();
  const frozen = new WeakSet<Pair>();
  const freezing: Array<{ text: string; done: () => void }> = [];
  const armed: Array<{ text: string; until: Buffer; done: () => void }> = [];
  let server: Server | undefined;
  let severed = false;
  let blackholed = false;
  let connections = 0;

  const onClient = (client: Socket) => {
    connections++;
    if (severed) return void client.destroy();
    if (blackholed) {
      const pair: Pair = [client, new Socket()];
      frozen.add(pair);
      pairs.add(pair);
      client.on('error', () => {});
      return;
    }
    const upstream = new Socket({ allowHalfOpen: halfOpen });
    const pair: Pair = [client, upstream];
    pairs.add(pair);
    let doomed: { until: Buffer; done: () => void } | undefined;
    const cut = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    if (halfOpen) {
      client.on('end', () => {
        if (!frozen.has(pair)) cut();
      });
      upstream.on('end', () => {
        if (!frozen.has(pair)) cut();
      });
    }
    upstream.connect(Number(t.port || defaultPort), t.hostname);
    client.on('data', (chunk) => {
      if (frozen.has(pair)) return;
      const f = freezing.findIndex((a) => chunk.includes(a.text));
      if (f >= 0) {
        frozen.add(pair);
        return freezing.splice(f, 1)[0]!.done();
      }
      if (!doomed) {
        const i = armed.findIndex((a) => chunk.includes(a.text));
        if (i >= 0) doomed = armed.splice(i, 1)[0]!;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (frozen.has(pair)) return;
      if (!doomed) return void client.write(chunk);
      // Swallowed; once the server says it is done, what the message asked for has run.
      if (chunk.includes(doomed.until)) {
        cut();
        doomed.done();
      }
    });
  };

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer({ allowHalfOpen: halfOpen }, onClient);
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
  const cutAll = () => {
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };

  return {
    url: url.toString(),
    get connections() {
      return connections;
    },
    down() {
      void closeServer();
      cutAll();
    },
    async up() {
      if (!server) await listen(port);
    },
    severUpstream(on: boolean) {
      severed = on;
      if (on) cutAll();
    },
    blackhole(on: boolean) {
      blackholed = on;
    },
    freeze() {
      for (const pair of pairs) frozen.add(pair);
    },
    freezeAt(text: string) {
      return new Promise<void>((done) => freezing.push({ text, done }));
    },
    loseReplyTo(text: string, until: Buffer) {
      return new Promise<void>((done) => armed.push({ text, until, done }));
    },
    async close() {
      cutAll();
      await closeServer();
    },
  };
}

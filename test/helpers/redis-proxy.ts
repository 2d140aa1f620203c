import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy between a gateway and Redis that fails the way networks do (the Redis twin of
 * pg-proxy.ts):
 * - `down()` cuts every connection and refuses new ones until `up()`;
 * - `severUpstream()`: new connections are accepted but cut at once, as a proxy or load balancer
 *   whose Redis behind it is gone does (the client connects, then its first command fails);
 * - `freeze()`: every connection open now goes silent, neither side cut (what reaches it is
 *   dropped, as a failover or a lost NAT entry leaves a connection); new connections work.
 * `connections` counts the connections accepted so far.
 */
export interface RedisProxy {
  /** The Redis URL `target` rewritten to go through the proxy. */
  url: string;
  readonly connections: number;
  down(): void;
  up(): Promise<void>;
  severUpstream(on: boolean): void;
  freeze(): void;
  /** New connections are accepted and then go silent (a proxy whose Redis stopped answering). */
  blackhole(on: boolean): void;
  close(): Promise<void>;
}

export async function startRedisProxy(target: string): Promise<RedisProxy> {
  const t = new URL(target);
  const pairs = new Set<[Socket, Socket]>();
  const frozen = new WeakSet<[Socket, Socket]>();
  let server: Server | undefined;
  let severed = false;
  let blackhole = false;
  let connections = 0;

  const onClient = (client: Socket) => {
    connections++;
    if (severed) return void client.destroy();
    if (blackhole) {
      const pair: [Socket, Socket] = [client, new Socket()];
      frozen.add(pair);
      pairs.add(pair);
      client.on('error', () => {});
      return;
    }
    const upstream = new Socket({ allowHalfOpen: true });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const cut = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    // Half-open sockets, so a frozen connection ignores a FIN too, as a dead network path does:
    // a client that only ends its side waits forever.
    client.on('end', () => {
      if (!frozen.has(pair)) cut();
    });
    upstream.on('end', () => {
      if (!frozen.has(pair)) cut();
    });
    upstream.connect(Number(t.port || 6379), t.hostname);
    client.on('data', (chunk) => {
      if (!frozen.has(pair)) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!frozen.has(pair)) client.write(chunk);
    });
  };

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer({ allowHalfOpen: true }, onClient);
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
    freeze() {
      for (const pair of pairs) frozen.add(pair);
    },
    blackhole(on: boolean) {
      blackhole = on;
    },
    async close() {
      cutAll();
      await closeServer();
    },
  };
}

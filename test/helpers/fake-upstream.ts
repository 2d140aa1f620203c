/**
 * Fake upstream: a real HTTP server on 127.0.0.1 (port 0) that replays scripted answers and
 * records what it received. Reusable by adapter, chat-route and routing tests.
 *
 *   const up = await startFakeUpstream({
 *     'POST /v1/chat/completions': { status: 200, json: {...} },          // JSON body
 *     'POST /v1/messages': [{ status: 529, json: {...} }, { sse: [...] }], // one entry per call, last repeats
 *     'GET /v1/models': (req) => ({ json: { data: [] } }),                 // computed from the request
 *   });
 *   up.url            // "http://127.0.0.1:PORT" (no trailing slash)
 *   up.requests       // ReceivedRequest[]: method, path (with query), headers, body, json, closed
 *   up.on('POST /x', answer) / up.close()
 *
 * Routes match `METHOD pathname` (the query string is ignored for matching, kept in `path`);
 * unmatched requests get 404 `{"error":{"message":"no route"}}`.
 *
 * An answer (`FakeAnswer`) is any of:
 * - `json` (serialized) or `body` (string, sent byte-exact) with `status` (default 200) and `headers`;
 * - `sse`: a script of steps written in order with `content-type: text/event-stream`: a string is one
 *   write (byte-exact, so chunk boundaries are under test control), `{ delayMs }` pauses,
 *   `{ until }` waits for a promise of the test's (the next write happens after something the
 *   test saw, not after a guessed delay), `'hang'` stops writing but keeps the connection open,
 *   `'reset'` destroys the socket;
 * - `hang: true`: never send headers (first-byte timeout); `reset: true`: destroy the socket at once;
 * - `delayMs`: wait before sending headers.
 *
 * `request.closed` resolves when the connection under that request closes, with `completed`
 * false when the response had not been fully written (the client aborted or the script hung):
 * the way to assert that a client disconnect reached the upstream.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type SseStep = string | { delayMs: number } | { until: Promise<unknown> } | 'hang' | 'reset';

export interface FakeAnswer {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string;
  sse?: SseStep[];
  hang?: boolean;
  reset?: boolean;
  delayMs?: number;
}

export interface ReceivedRequest {
  method: string;
  /** Path with query string. */
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Parsed body when it is JSON, else undefined. */
  json: any;
  /** Client port: equal ports on two requests mean a reused keep-alive connection. */
  remotePort: number | undefined;
  /** Resolves when the connection closes; `completed` is false if the answer was cut short. */
  closed: Promise<{ completed: boolean }>;
}

export type FakeHandler = FakeAnswer | ((req: ReceivedRequest) => FakeAnswer | Promise<FakeAnswer>);
export type FakeRoutes = Record<string, FakeHandler | FakeHandler[]>;

export interface FakeUpstream {
  url: string;
  requests: ReceivedRequest[];
  on(route: string, handler: FakeHandler | FakeHandler[]): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeUpstream(routes: FakeRoutes = {}): Promise<FakeUpstream> {
  const table = new Map<string, { handlers: FakeHandler[]; calls: number }>();
  const on = (route: string, handler: FakeHandler | FakeHandler[]) => {
    table.set(route, { handlers: Array.isArray(handler) ? handler : [handler], calls: 0 });
  };
  for (const [route, handler] of Object.entries(routes)) on(route, handler);
  const requests: ReceivedRequest[] = [];

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: any;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const closed = new Promise<{ completed: boolean }>((resolve) => {
      res.once('close', () => resolve({ completed: res.writableFinished }));
    });
    const received: ReceivedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      json,
      remotePort: req.socket.remotePort,
      closed,
    };
    requests.push(received);
    const pathname = (req.url ?? '/').split('?')[0];
    const entry = table.get(`${req.method} ${pathname}`);
    if (!entry) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no route"}}');
      return;
    }
    const handler = entry.handlers[Math.min(entry.calls, entry.handlers.length - 1)];
    entry.calls++;
    const answer = typeof handler === 'function' ? await handler(received) : handler;
    await play(answer, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function play(a: FakeAnswer, res: ServerResponse): Promise<void> {
  if (a.reset) {
    res.socket?.destroy();
    return;
  }
  if (a.hang) return;
  if (a.delayMs) await sleep(a.delayMs);
  const status = a.status ?? 200;
  if (a.sse) {
    res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...a.headers });
    res.flushHeaders();
    for (const step of a.sse) {
      if (res.destroyed) return;
      if (step === 'hang') return;
      if (step === 'reset') {
        res.socket?.destroy();
        return;
      }
      if (typeof step === 'string') res.write(step);
      else if ('until' in step) await step.until;
      else await sleep(step.delayMs);
    }
    res.end();
    return;
  }
  const body = a.json !== undefined ? JSON.stringify(a.json) : (a.body ?? '');
  const type = a.json !== undefined ? { 'content-type': 'application/json' } : {};
  res.writeHead(status, { ...type, ...a.headers });
  res.end(body);
}

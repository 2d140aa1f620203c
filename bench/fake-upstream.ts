import { createServer, type ServerResponse } from 'node:http';

/**
 * A fast OpenAI-compatible upstream: every response body is computed once at start, so the
 * upstream costs as little CPU as possible and the proxies under test dominate the profile.
 * `POST /__mode {"slow_ms": n}` switches streams to one chunk every n ms (0 = as fast as
 * possible), which is how the harness holds 1,000 streams open at once.
 */
const MODEL = process.env.BENCH_MODEL ?? 'bench/model';
const CHUNKS = 20;
const created = Math.floor(Date.now() / 1000);

const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello from the fake upstream, a short answer.' },
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
  }),
);

/** 20 `data:` events: 18 content deltas, one carrying finish_reason, one with usage; then [DONE]. */
const sse: Buffer[] = [];
const chunk = (choices: unknown[], extra: object = {}) =>
  Buffer.from(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: MODEL, choices, ...extra })}\n\n`,
  );
for (let i = 0; i < CHUNKS - 2; i++) {
  const delta = i === 0 ? { role: 'assistant', content: 'tok0 ' } : { content: `tok${i} ` };
  sse.push(chunk([{ index: 0, delta, finish_reason: null }]));
}
sse.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
sse.push(chunk([], { usage: { prompt_tokens: 12, completion_tokens: CHUNKS - 2, total_tokens: 30 } }));
sse.push(Buffer.from('data: [DONE]\n\n'));

const models = Buffer.from(
  JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model', created, owned_by: 'bench' }] }),
);

let slowMs = 0;

function stream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const interval = slowMs;
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    res.write(sse[i++]);
    if (i === sse.length) res.end();
    else if (interval > 0) setTimeout(next, interval);
    // A separate turn per chunk so the proxy sees (mostly) one chunk per read, as with a model.
    else setImmediate(next);
  };
  next();
}

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const url = req.url ?? '';
    if (req.method === 'POST' && url.endsWith('/chat/completions')) {
      // A substring test, not JSON.parse: the upstream must stay cheap.
      const body = Buffer.concat(parts).toString();
      if (/"stream"\s*:\s*true/.test(body)) return stream(res);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': completion.length });
      return res.end(completion);
    }
    if (req.method === 'GET' && url.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(models);
    }
    if (req.method === 'POST' && url === '/__mode') {
      slowMs = Number(JSON.parse(Buffer.concat(parts).toString() || '{}').slow_ms ?? 0);
      res.writeHead(204);
      return res.end();
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found"}}');
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.requestTimeout = 0;
server.maxRequestsPerSocket = 0;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(
    `fake upstream listening on http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}\n`,
  );
});

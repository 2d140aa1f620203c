/**
 * The gateway the browser tests drive. `startGatewayForE2E()` is the one seam between the
 * console's tests and whatever serves it:
 * - default: the real gateway (test/helpers/gateway.ts) serving the built console, with chat
 *   routed to a fake OpenAI-compatible upstream that streams `ANSWER` piece by piece;
 * - `E2E_GATEWAY=stub`: the in-memory stand-in of ./stub-gateway.ts (web/dist plus the /api and
 *   /v1 subset the pages use), to work on the console without the backend.
 * Either way the tests talk HTTP only, and create the data they need through /api.
 */
import { fileURLToPath } from 'node:url';
import { startStubGateway } from './stub-gateway.js';

export const CHAT_MODEL = 'e2e/fake-chat';
/**
 * An upstream declared in the gateway's configuration (`channels:`), beside the one the tests
 * make through /api: disabled, so it routes nothing.
 */
export const DECLARED_CHANNEL = 'e2e declared';
/** The one model the fake upstream's `GET /v1/models` lists (unknown to the registry). */
export const LISTED_MODEL = 'e2e-listed-model';
/** The streamed answer, in the pieces the upstream sends. */
export const ANSWER = [
  'Hello',
  ' from',
  ' the',
  ' fake',
  ' upstream',
  ',',
  ' streamed',
  ' token',
  ' by',
  ' token',
  '.',
];

export interface E2EGateway {
  url: string;
  admin: { username: string; password: string };
  chatModel: string;
  kind: 'stub' | 'real';
  /**
   * The fake upstream's address (real gateway only): its `GET /v1/models` lists `LISTED_MODEL`,
   * for an upstream that serves what it lists.
   */
  upstreamUrl?: string;
  close(): Promise<void>;
}

const WEB_ROOT = fileURLToPath(new URL('../../web/dist/', import.meta.url));

export async function startGatewayForE2E(): Promise<E2EGateway> {
  if (process.env.E2E_GATEWAY !== 'stub') return startReal();
  const admin = { username: 'root', password: 'e2e-root-password' };
  const stub = await startStubGateway({
    webRoot: WEB_ROOT,
    admin,
    chatModel: CHAT_MODEL,
    answer: ANSWER,
    declaredChannel: DECLARED_CHANNEL,
  });
  return { url: stub.url, admin, chatModel: CHAT_MODEL, kind: 'stub', close: stub.close };
}

async function startReal(): Promise<E2EGateway> {
  const { startTestGateway, ROOT_PASSWORD } = await import('../helpers/gateway.js');
  const { startFakeUpstream } = await import('../helpers/fake-upstream.js');
  const chunk = (delta: object, extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: 1, model: 'fake-chat', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  const sse = [
    ...ANSWER.flatMap((piece, i) => [
      { delayMs: 120 },
      chunk(i === 0 ? { role: 'assistant', content: piece } : { content: piece }),
    ]),
    `data: ${JSON.stringify({ id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: 1, model: 'fake-chat', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: ANSWER.length, total_tokens: 12 + ANSWER.length } })}\n\n`,
    'data: [DONE]\n\n',
  ];
  const completion = {
    id: 'chatcmpl-e2e',
    object: 'chat.completion',
    created: 1,
    model: 'fake-chat',
    choices: [{ index: 0, message: { role: 'assistant', content: ANSWER.join('') }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: ANSWER.length, total_tokens: 12 + ANSWER.length },
  };
  // Streams for the playground, plain JSON for the channel test.
  const upstream = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => (req.json?.stream ? { sse } : { json: completion }),
    'GET /v1/models': { json: { object: 'list', data: [{ id: LISTED_MODEL, object: 'model' }] } },
  });
  // Request logs are flushed in batches; a short interval makes a finished chat show on the Logs page at once.
  const gw = await startTestGateway({
    server: { serve_console: true },
    log: { request_logs_flush_ms: 20 },
    channels: [
      {
        name: DECLARED_CHANNEL,
        kind: 'openai-compatible',
        base_url: `${upstream.url}/v1`,
        models: ['e2e/declared-only'],
        status: 2,
      },
    ],
  });
  const cookie = await gw.login();
  const must = async (method: string, path: string, body: unknown) => {
    const r = await gw.call(method, path, { cookie, body });
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await must('POST', '/api/model', {
    id: CHAT_MODEL,
    name: 'Fake chat model',
    context_length: 8192,
    max_completion_tokens: 1024,
    pricing: { prompt: '0.000001', completion: '0.000002', request: '0', image: '0' },
    input_modalities: ['text'],
    output_modalities: ['text'],
    supported_parameters: ['temperature', 'max_tokens'],
  });
  await must('POST', '/api/channel', {
    name: 'fake upstream',
    kind: 'openai-compatible',
    base_url: `${upstream.url}/v1`,
    keys: ['sk-fake-upstream'],
    models: [CHAT_MODEL],
    model_mapping: { [CHAT_MODEL]: 'fake-chat' },
  });
  return {
    url: gw.url,
    admin: { username: 'root', password: ROOT_PASSWORD },
    chatModel: CHAT_MODEL,
    kind: 'real',
    upstreamUrl: upstream.url,
    async close() {
      await gw.close();
      await upstream.close();
    },
  };
}

import { oaChunk, oaCompletion, sse } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/**
 * The set-up of the CORS tests (test/foundation/cors.test.ts, test/e2e/cors.e2e.test.ts): an
 * OpenAI-compatible upstream whose chat answers "Hello" (streamed as "Hel" + "lo"), and gateways
 * routing model `acme/small` to it.
 */
export const CORS_MODEL = 'acme/small';
export const CORS_ANSWER = 'Hello';

export function startCorsUpstream(): Promise<FakeUpstream> {
  return startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json.stream
        ? {
            sse: sse([
              oaChunk({ role: 'assistant', content: 'Hel' }),
              oaChunk({ content: 'lo' }),
              oaChunk({}, 'stop'),
            ]),
          }
        : { json: oaCompletion(CORS_ANSWER) },
  });
}

export interface CorsGateway {
  gw: TestGateway;
  /** root's session cookie. */
  cookie: string;
  /** Creates an API key (root's unless `body` says otherwise) and returns its secret. */
  key(body?: Record<string, unknown>): Promise<string>;
}

/** A gateway with `server` settings (cors_origins…) and `env`, routing CORS_MODEL to `up`. */
export async function startCorsGateway(
  up: FakeUpstream,
  server: Record<string, unknown> = {},
  env?: Record<string, string>,
): Promise<CorsGateway> {
  const gw = await startTestGateway(
    {
      server,
      gateway: { discover_models: false },
      channels: [
        {
          name: 'fake',
          kind: 'openai-compatible',
          base_url: `${up.url}/v1`,
          keys: ['k'],
          models: [CORS_MODEL],
        },
      ],
      models: [{ id: CORS_MODEL, context_length: 4096, pricing: { prompt: '0', completion: '0' } }],
    },
    { env },
  );
  const cookie = await gw.login();
  const key = async (body: Record<string, unknown> = {}) =>
    (await gw.call('POST', '/api/key', { cookie, body: { name: 'browser', ...body } })).body.data
      .key as string;
  return { gw, cookie, key };
}

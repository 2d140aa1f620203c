import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampledTokens } from '../../src/gateway/chat/tokens.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Tokens per minute on `POST /v1/embeddings` with pre-tokenized input: a token array costs
 * exactly its length up front (docs/quotas.md), as a string costs its estimate. The fake
 * OpenAI upstream reports as `prompt_tokens` the number of token ids it was sent, as OpenAI does.
 */
const MODEL = 'openai/text-embedding-3-small';
const TPM = 100;

let up: FakeUpstream;
let gw: TestGateway;
let cookie: string;

const ids = (n: number) => Array.from({ length: n }, (_, i) => 1000 + i);

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/embeddings': (r) => {
      const input: unknown[] = typeof r.json.input === 'string' ? [r.json.input] : r.json.input;
      const items = input.every((x) => typeof x === 'number') ? [input] : input;
      const tokens = items.reduce<number>(
        (n, x) => n + (Array.isArray(x) ? x.length : sampledTokens([String(x)])),
        0,
      );
      return {
        json: {
          object: 'list',
          data: items.map((_, index) => ({ object: 'embedding', index, embedding: [0.5, -0.25] })),
          model: 'text-embedding-3-small',
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        },
      };
    },
  });
  gw = await startTestGateway({
    gateway: { discover_models: false },
    channels: [
      {
        name: 'openai',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['sk-up'],
        models: [MODEL],
        model_mapping: { [MODEL]: 'text-embedding-3-small' },
      },
    ],
    models: [{ id: MODEL, pricing: { prompt: '0.00000002' } }],
  });
  cookie = await gw.login();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function tpmKey(): Promise<string> {
  const r = await gw.call('POST', '/api/key', { cookie, body: { name: 'tpm', tpm_limit: TPM } });
  expect(r.status).toBe(200);
  return r.body.data.key;
}
const embed = (key: string, input: unknown) =>
  gw.call('POST', '/v1/embeddings', { token: key, body: { model: MODEL, input } });

describe('tokens per minute for token-array embedding inputs', () => {
  it('charges a token array its length up front and refuses one larger than what is left', async () => {
    const key = await tpmKey();
    const first = await embed(key, ids(60));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe(String(TPM - 60));
    await gw.services.requestLogs.flush();
    // 40 tokens left this minute; 500 token ids do not fit.
    const second = await embed(key, ids(500));
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(second.body.error).toMatchObject({ code: 429, metadata: { scope: 'key_tpm', limit: TPM } });
    expect(up.requests.filter((r) => Array.isArray(r.json?.input) && r.json.input.length === 500)).toEqual(
      [],
    );
  });

  it('sums an array of token arrays', async () => {
    const key = await tpmKey();
    const first = await embed(key, [ids(20), ids(30)]);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe(String(TPM - 50));
    await gw.services.requestLogs.flush();
    const second = await embed(key, [ids(30), ids(30)]);
    expect(second.status).toBe(429);
  });

  it('charges a string its estimate, as before', async () => {
    const key = await tpmKey();
    const text = 'the quick brown fox jumps over the lazy dog';
    const r = await embed(key, [text, text]);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining-tokens')).toBe(String(TPM - sampledTokens([text, text])));
  });
});

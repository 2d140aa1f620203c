import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type EmbeddingGateway, embeddingModel, ROUTE, startEmbeddingGateway } from './embedding-gateway.js';

/**
 * With `truncation: true` the upstream cuts an input to what the model takes and bills that
 * (Voyage reports the truncated count), so the quota held before the call counts each input's
 * text at most the model's context length: a key that can pay for the truncated request is not
 * refused a 402 for text the upstream will never read. It used to hold the whole text.
 */
const MODEL = 'acme/short';
const CONTEXT = 100; // tokens per input
let up: FakeUpstream;
let g: EmbeddingGateway;
let key: string;
let keyId: number;

beforeAll(async () => {
  up = await startFakeUpstream({
    [ROUTE]: (r) => ({
      json: {
        object: 'list',
        data: (r.json.input as string[]).map((_, index) => ({
          object: 'embedding',
          index,
          embedding: [index, 0.5],
        })),
        model: r.json.model,
        // What a truncating upstream bills: at most the context per input.
        usage: {
          prompt_tokens: CONTEXT * r.json.input.length,
          total_tokens: CONTEXT * r.json.input.length,
        },
      },
    }),
  });
  g = await startEmbeddingGateway(
    {
      channels: [
        { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: [MODEL] },
      ],
      // 1 micro-USD a token.
      models: [{ ...embeddingModel(MODEL), context_length: CONTEXT }],
    },
    () => [up],
  );
  // 2,000 micro-USD: two inputs cut to 100 tokens fit; 2 x 20,000 untruncated tokens do not.
  const made = (
    await g.gw.call('POST', '/api/key', { cookie: g.cookie, body: { name: 'small', quota_limit: 0.002 } })
  ).body.data;
  key = made.key;
  keyId = made.id;
});
afterAll(async () => g?.close());

const long = 'lorem ipsum '.repeat(10_000); // ~20,000 tokens

describe('the quota hold of a truncated request', () => {
  it('counts each input at most the model context: served, billed what the upstream reported', async () => {
    const r = await g.embed(MODEL, [long, long], { token: key, body: { truncation: true } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.usage).toEqual({ prompt_tokens: 2 * CONTEXT, total_tokens: 2 * CONTEXT });
    const { used } = await g.billing(keyId);
    expect(used).toBe(2 * CONTEXT);
  });

  it('without truncation the whole text is held (the upstream refuses it or reads it all)', async () => {
    const r = await g.embed(MODEL, [long, long], { token: key, body: { truncation: false } });
    expect(r.status, JSON.stringify(r.body)).toBe(402);
  });
});

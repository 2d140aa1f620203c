import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, model, oaCompletion, startChatGateway } from './chat-helpers.js';

/**
 * `max_tokens` / `max_completion_tokens` against the context of every model the request may go
 * to (docs/routing.md, "The route plan"): a model whose context cannot hold the limit is skipped,
 * never sent a request it would refuse, and the 400 naming the field comes only when no model of
 * the request (`model` plus `models`) can take it. The fake upstream answers like a real one: a
 * context-length 400 when the limit does not fit the model's context, and `t/down` always fails.
 */
const SMALL = 4096;
const BIG = 100_000;
const contextOf: Record<string, number> = {
  't/small': SMALL,
  't/small2': SMALL,
  't/big': BIG,
  't/down': BIG,
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (r) => {
      const limit = r.json.max_completion_tokens ?? r.json.max_tokens ?? 0;
      if (limit >= contextOf[r.json.model]!)
        return {
          status: 400,
          json: {
            error: {
              message: "This model's maximum context length is 4096 tokens",
              code: 'context_length_exceeded',
            },
          },
        };
      if (r.json.model === 't/down') return { status: 500, json: { error: { message: 'boom' } } };
      return { json: oaCompletion(`from ${r.json.model}`) };
    },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: Object.keys(contextOf),
      },
    ],
    models: Object.entries(contextOf).map(([id, ctx]) => model(id, { context_length: ctx })),
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const send = async (body: Record<string, unknown>) => {
  const before = up.requests.length;
  const r = await c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { messages: [{ role: 'user', content: 'x' }], ...body },
  });
  return { r, sentTo: up.requests.slice(before).map((q) => q.json.model as string) };
};

describe('max_tokens and the contexts of fallback models', () => {
  it('a primary too small for the limit is skipped and a fallback that fits serves', async () => {
    for (const field of ['max_tokens', 'max_completion_tokens']) {
      const { r, sentTo } = await send({ model: 't/small', models: ['t/big'], [field]: 8000 });
      expect(r.status, `${field}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.choices[0].message.content).toBe('from t/big');
      expect(sentTo, field).toEqual(['t/big']);
    }
  });

  it('a fallback too small for the limit is never sent the request', async () => {
    const { r, sentTo } = await send({ model: 't/down', models: ['t/small'], max_tokens: 8000 });
    expect(sentTo).toEqual(['t/down']);
    // The primary's failure is what the client learns, not a context error of a model it never reached.
    expect(r.status).toBe(502);
  });

  it('is a 400 naming the field sent only when no model can take the limit', async () => {
    for (const field of ['max_tokens', 'max_completion_tokens']) {
      const { r, sentTo } = await send({ model: 't/small', models: ['t/small2'], [field]: SMALL });
      expect(r.status, field).toBe(400);
      expect(r.body.error.param).toBe(field);
      expect(r.body.error.message).toMatch(
        new RegExp(`^${field}: must be below the context length of t/small`),
      );
      expect(r.body.error.message).toContain(`(${SMALL})`);
      expect(sentTo, field).toEqual([]);
    }
  });

  it('a limit every model can take goes to the primary as before', async () => {
    const { r, sentTo } = await send({ model: 't/small', models: ['t/big'], max_tokens: 100 });
    expect(r.status).toBe(200);
    expect(sentTo).toEqual(['t/small']);
  });
});

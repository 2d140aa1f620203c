import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countPromptTokens } from '../../src/gateway/chat/tokens.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { text } from '../helpers/texts.js';
import { type ChatGateway, model, oaChunk, oaCompletion, sse, startChatGateway } from './chat-helpers.js';

/**
 * The quota reservation of a request with `transforms: ["middle-out"]` prices the prompt as it
 * would be sent (at most each candidate's context), not the one the client sent, and stays an
 * upper bound of what is billed. Each test has its own key, so its first reservation is leased
 * exactly (docs/quotas.md) and reads as the key's `quota_used` while the upstream holds the call.
 * Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
let up: FakeUpstream;
let c: ChatGateway;
/** While set, the upstream answers only once it resolves. */
let gate: Promise<void> | undefined;

const SHORT = { context: 8_000, completion: 1_000, prompt$: 1e-6, completion$: 2e-6 };
const WIDE = { context: 20_000, completion: 2_000, prompt$: 3e-6, completion$: 6e-6 };
/** The most each model can be billed with middle-out and no max_tokens, in micro-USD. */
const SHORT_WORST = SHORT.context * 1 + SHORT.completion * 2;
const WIDE_WORST = WIDE.context * 3 + WIDE.completion * 6;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': async (req) => {
      await gate;
      const { model: m, messages, stream } = req.json;
      if (m === 'acme/down') return { status: 500, json: { error: { message: 'down' } } };
      const last = messages.at(-1).content;
      // 'full': the most the short model can take, reported by the upstream.
      if (last === 'full')
        return {
          json: oaCompletion('ok', { prompt_tokens: SHORT.context, completion_tokens: SHORT.completion }),
        };
      // Otherwise no usage: the gateway counts the prompt it sent.
      if (stream) return { sse: sse([oaChunk({ role: 'assistant', content: 'ok' }), oaChunk({}, 'stop')]) };
      return { json: { ...oaCompletion('ok'), usage: undefined } };
    },
  });
  const price = (p: typeof SHORT) => ({ prompt: String(p.prompt$), completion: String(p.completion$) });
  c = await startChatGateway({
    channels: [
      {
        name: 'up',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['acme/short', 'acme/wide', 'acme/down'],
      },
    ],
    models: [
      model('acme/short', {
        context_length: SHORT.context,
        max_completion_tokens: SHORT.completion,
        pricing: price(SHORT),
      }),
      model('acme/wide', {
        context_length: WIDE.context,
        max_completion_tokens: WIDE.completion,
        pricing: price(WIDE),
      }),
      // Cheap, small, and failing: the fallback's worst case is not the first model's.
      model('acme/down', { context_length: 4_000, max_completion_tokens: 500 }),
    ],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 5000, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

/** ~400 K tokens by their byte bound (~100 K by count): far over every context here. */
const huge = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: text(400_000, false, 7) },
  { role: 'assistant', content: 'noted' },
  { role: 'user', content: 'go on' },
];

/** A fresh key with a limit of `usd`: its first reservation is exactly the estimate. */
async function newKey(usd: number): Promise<{ id: number; key: string }> {
  const r = await c.gw.call('POST', '/api/key', { cookie: c.cookie, body: { name: 'mo', quota_limit: usd } });
  expect(r.status).toBe(200);
  return { id: r.body.data.id, key: r.body.data.key };
}

/** An estimate in micro-USD: `exact`, or one more where the float product rounded up past it. */
const expectEstimate = (micros: number, exact: number) => expect(micros - exact).toBeOneOf([0, 1]);

async function usedMicros(id: number): Promise<number> {
  const keys = (await c.gw.call('GET', '/api/key?page_size=100', { cookie: c.cookie })).body.data as any[];
  return Math.round(keys.find((k) => k.id === id).quota_used * 1e6);
}

/**
 * Sends `body` with the upstream held: `reserved` is what the key holds during the call,
 * `billed` what it was charged once the call settled.
 */
async function reservedAndBilled(k: { id: number; key: string }, body: Record<string, unknown>) {
  let open!: () => void;
  gate = new Promise((r) => {
    open = r;
  });
  const seen = up.requests.length;
  const before = await usedMicros(k.id);
  let answered: Awaited<ReturnType<typeof c.gw.call>> | undefined;
  const pending = c.gw.call('POST', '/v1/chat/completions', { token: k.key, body }).then((r) => {
    answered = r;
    return r;
  });
  try {
    for (let i = 0; i < 500 && up.requests.length === seen && !answered; i++)
      await new Promise((r) => setTimeout(r, 10));
    if (up.requests.length === seen)
      expect.fail(
        `no upstream call; the gateway answered ${answered?.status} ${JSON.stringify(answered?.body)}`,
      );
    const reserved = (await usedMicros(k.id)) - before;
    open();
    const r = await pending;
    await c.gw.services.requestLogs.flush();
    return { r, reserved, billed: (await usedMicros(k.id)) - before };
  } finally {
    open();
    gate = undefined;
  }
}

describe('the reservation of a middle-out request', () => {
  it('prices the prompt as cut: a key that cannot cover the whole prompt is served with middle-out', async () => {
    const k = await newKey(0.05);
    const body = {
      model: 'acme/short',
      messages: huge,
      transforms: ['middle-out'],
      usage: { include: true },
    };
    const { r, reserved, billed } = await reservedAndBilled(k, body);
    expect(r.status).toBe(200);
    const sent = up.requests.at(-1)!.json;
    expect(countPromptTokens(sent)).toBeLessThanOrEqual(SHORT.context);
    // At most the context's prompt and the completion limit, at the model's prices.
    expectEstimate(reserved, SHORT_WORST);
    expect(billed).toBe(Math.round(r.body.usage.cost * 1e6));
    expect(billed).toBeGreaterThan(0);
    expect(reserved).toBeGreaterThanOrEqual(billed);
  });

  it('without middle-out the same key is refused: the whole prompt goes, and the estimate prices it', async () => {
    const k = await newKey(0.05);
    const before = up.requests.length;
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: k.key,
      body: { model: 'acme/short', messages: huge },
    });
    expect(r.status).toBe(402);
    expect(r.body.error.metadata.scope).toBe('key');
    expect(r.body.error.metadata.needed).toBeGreaterThan(0.3);
    expect(up.requests.length).toBe(before);
    expect(await usedMicros(k.id)).toBe(0);
  });

  it('a refusal of a request without max_tokens says that a lower max_tokens may fit', async () => {
    // $0.001 covers a short answer but not the short model's whole completion limit ($0.002).
    const k = await newKey(0.001);
    const messages = [{ role: 'user', content: 'hi' }];
    const call = (key: string, extra: Record<string, unknown>) =>
      c.gw.call('POST', '/v1/chat/completions', {
        token: key,
        body: { model: 'acme/short', messages, ...extra },
      });
    for (const extra of [{}, { stream: true }]) {
      const refused = await call(k.key, extra);
      expect(refused.status).toBe(402);
      expect(refused.body.error).toMatchObject({ code: 402, type: 'insufficient_quota', param: null });
      expect(refused.body.error.metadata.scope).toBe('key');
      expect(refused.body.error.message).toMatch(
        /^quota exhausted: the quota of API key \d+ cannot cover this request \(\$0\.002\d*\); without max_tokens the estimate counts the longest answer the model can give, a lower max_tokens may fit$/,
      );
    }
    expect((await call(k.key, { max_tokens: 10 })).status).toBe(200);
    // A request that set its limit gets the plain refusal.
    const tiny = await newKey(0.000001);
    for (const extra of [{ max_tokens: 10 }, { max_completion_tokens: 10 }]) {
      const refused = await call(tiny.key, extra);
      expect(refused.status).toBe(402);
      expect(refused.body.error.message).not.toContain('max_tokens');
    }
  });

  it('is the worst case over the fallback models: the widest, dearest context decides', async () => {
    const body = {
      model: 'acme/down',
      models: ['acme/short', 'acme/wide'],
      messages: huge,
      transforms: ['middle-out'],
    };
    // Enough for the short model's worst case but not the wide one's: refused.
    const short = await newKey(0.05);
    const refused = await c.gw.call('POST', '/v1/chat/completions', { token: short.key, body });
    expect(refused.status).toBe(402);
    expectEstimate(Math.round(refused.body.error.metadata.needed * 1e6), WIDE_WORST);

    const k = await newKey(0.1);
    const { r, reserved, billed } = await reservedAndBilled(k, { ...body, models: ['acme/wide'] });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('acme/wide');
    expect(r.headers.get('x-modelgate-attempts')).toBe('up/acme/down=server_error:500, up/acme/wide=ok');
    expectEstimate(reserved, WIDE_WORST);
    expect(billed).toBeGreaterThan(SHORT_WORST);
    expect(reserved).toBeGreaterThanOrEqual(billed);
  });

  it('covers what the upstream reports when the cut prompt fills the context', async () => {
    const k = await newKey(0.05);
    const messages = [...huge.slice(0, -1), { role: 'user', content: 'full' }];
    const { r, reserved, billed } = await reservedAndBilled(k, {
      model: 'acme/short',
      messages,
      transforms: ['middle-out'],
    });
    expect(r.status).toBe(200);
    expect(billed).toBe(SHORT_WORST);
    expect(reserved).toBeGreaterThanOrEqual(billed);
  });

  it('covers a stream billed on the prompt it sent; max_tokens replaces the completion limit', async () => {
    const k = await newKey(0.05);
    const { r, reserved, billed } = await reservedAndBilled(k, {
      model: 'acme/short',
      messages: huge,
      transforms: ['middle-out'],
      max_tokens: 300,
      stream: true,
    });
    expect(r.status).toBe(200);
    expectEstimate(reserved, SHORT.context * 1 + 300 * 2);
    expect(billed).toBeGreaterThan(SHORT.context / 2);
    expect(reserved).toBeGreaterThanOrEqual(billed);
  });

  it('a prompt that fits is priced as without middle-out', async () => {
    const small = [{ role: 'user', content: 'hello there' }];
    const a = await reservedAndBilled(await newKey(0.05), {
      model: 'acme/short',
      messages: small,
      max_tokens: 50,
      transforms: ['middle-out'],
    });
    const b = await reservedAndBilled(await newKey(0.05), {
      model: 'acme/short',
      messages: small,
      max_tokens: 50,
    });
    expect(a.r.status).toBe(200);
    expect(a.reserved).toBe(b.reserved);
    expect(a.reserved).toBeGreaterThanOrEqual(a.billed);
  });
});

describe('tokens per minute under middle-out', () => {
  /** A key with a tokens-per-minute limit and no quota. */
  async function tpmKey(tpm: number): Promise<string> {
    const r = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'tpm', tpm_limit: tpm },
    });
    expect(r.status).toBe(200);
    return r.body.data.key;
  }
  const send = (key: string, body: Record<string, unknown>) =>
    c.gw.call('POST', '/v1/chat/completions', { token: key, body });

  it('charges the prompt up front at most the widest requested context, so the minute is not emptied', async () => {
    const key = await tpmKey(60_000);
    const body = { model: 'acme/short', models: ['acme/down'], messages: huge, transforms: ['middle-out'] };
    const first = await send(key, body);
    expect(first.status).toBe(200);
    // Charged the short model's context (the widest of short and down), not ~100 K tokens.
    expect(Number(first.headers.get('x-ratelimit-remaining-tokens'))).toBe(60_000 - SHORT.context);
    await c.gw.services.requestLogs.flush();
    const second = await send(key, body);
    expect(second.status).toBe(200);
  });

  it("the same with OpenRouter's context-compression plugin in place of transforms", async () => {
    const key = await tpmKey(60_000);
    const plugins = [{ id: 'context-compression' }];
    const r = await send(key, { model: 'acme/short', models: ['acme/down'], messages: huge, plugins });
    expect(r.status).toBe(200);
    expect(Number(r.headers.get('x-ratelimit-remaining-tokens'))).toBe(60_000 - SHORT.context);
  });

  it('without middle-out the whole prompt is charged', async () => {
    const key = await tpmKey(60_000);
    const r = await send(key, { model: 'acme/short', messages: huge });
    // The prompt (~100 K tokens) is over the whole allowance: charged as the whole allowance.
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
  });
});

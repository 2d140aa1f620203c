import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRUNCATION_MARKER } from '../../src/gateway/chat/middle-out.js';
import { countPromptTokens } from '../../src/gateway/chat/tokens.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { text } from '../helpers/texts.js';
import { type ChatGateway, fixtureJson, model, oaCompletion, startChatGateway } from './chat-helpers.js';

// `transforms: ["middle-out"]` end to end: what the upstream receives.
let up: FakeUpstream;
let c: ChatGateway;
const CONTEXT = 8_000;
const CLAUDE_CONTEXT = 12_000;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': { json: oaCompletion('ok') },
    'POST /v1/messages': { json: fixtureJson('anthropic/chat.json') },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'up',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['acme/short', 'acme/tiny', 'acme/big'],
      },
      { name: 'an', kind: 'anthropic', base_url: up.url, keys: ['k'], models: ['acme/claude'] },
    ],
    models: [
      model('acme/short', { context_length: CONTEXT, max_completion_tokens: 1000 }),
      model('acme/tiny', { context_length: 60, max_completion_tokens: 10 }),
      model('acme/big'),
      model('acme/claude', { context_length: CLAUDE_CONTEXT, max_completion_tokens: 64_000 }),
    ],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

/** An Anthropic request body's prompt as OpenAI messages, to count it with the same tokenizer. */
const asOpenAi = (body: any) => ({
  messages: [
    { role: 'system', content: body.system.map((b: any) => b.text).join('') },
    ...body.messages.map((m: any) => ({
      role: m.role,
      content: typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text ?? '').join(''),
    })),
  ],
});

const chat = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/v1/chat/completions', { token: c.key, body: { model: 'acme/short', ...body } });

describe('middle-out through the gateway', () => {
  const system = { role: 'system', content: 'You are terse.' };
  const turns = Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `turn ${i}: ${text(2_000, false, i + 1)}`,
  }));

  it('sends the upstream a conversation cut from the middle to fit with max_tokens', async () => {
    const messages = [system, ...turns];
    const r = await chat({ messages, max_tokens: 500, transforms: ['middle-out'] });
    expect(r.status).toBe(200);
    const sent = up.requests.at(-1)!.json;
    expect(sent.messages.length).toBeLessThan(messages.length);
    expect(sent.messages[0]).toEqual(system);
    expect(sent.messages[1]).toEqual(turns[0]);
    expect(sent.messages.at(-1)).toEqual(turns.at(-1));
    expect(countPromptTokens(sent) + 500).toBeLessThanOrEqual(CONTEXT);
    expect(sent.transforms).toBeUndefined();
  });

  it('without max_tokens it keeps room for the answer the upstream will give', async () => {
    const messages = [system, ...turns];
    // OpenAI-compatible: nothing is sent, the answer gets what the prompt leaves; the room kept is
    // the default answer length, at most the model's limit (1,000) and a quarter of its context.
    expect((await chat({ messages, transforms: ['middle-out'] })).status).toBe(200);
    const sent = up.requests.at(-1)!.json;
    expect(sent.max_tokens).toBeUndefined();
    expect(countPromptTokens(sent) + 1_000).toBeLessThanOrEqual(CONTEXT);
    // Anthropic: sent its default max_tokens (4,096), which with the prompt must fit the context.
    const r = await chat({ model: 'acme/claude', messages, transforms: ['middle-out'] });
    expect(r.status).toBe(200);
    const body = up.requests.at(-1)!.json;
    expect(body.max_tokens).toBe(4_096);
    expect(body.messages.length).toBeLessThan(turns.length);
    expect(countPromptTokens(asOpenAi(body)) + body.max_tokens).toBeLessThanOrEqual(CLAUDE_CONTEXT);
  });

  it("keeps room for Anthropic's max_tokens as sent, raised to hold a thinking budget", async () => {
    // Ending on the user's turn: a last assistant turn (a prefill) goes without thinking.
    const messages = [system, ...turns.slice(0, -1)];
    // max_tokens 1,000 with a 3,000-token budget goes to Anthropic as 4,000 (the budget is part of
    // max_tokens): the prompt must leave room for all of it, not for the 1,000 asked.
    const r = await chat({
      model: 'acme/claude',
      messages,
      max_tokens: 1_000,
      reasoning: { max_tokens: 3_000 },
      transforms: ['middle-out'],
    });
    expect(r.status).toBe(200);
    const body = up.requests.at(-1)!.json;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 3_000 });
    expect(body.max_tokens).toBe(4_000);
    expect(countPromptTokens(asOpenAi(body)) + body.max_tokens).toBeLessThanOrEqual(CLAUDE_CONTEXT);
  });

  it('keeps the client’s betas on a :thinking variant’s request it cuts (they ride hidden on it)', async () => {
    const messages = [system, ...turns.slice(0, -1)];
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      headers: { 'x-anthropic-beta': 'interleaved-thinking-2025-05-14' },
      body: { model: 'acme/claude:thinking', messages, max_tokens: 1_000, transforms: ['middle-out'] },
    });
    expect(r.status).toBe(200);
    const sent = up.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.json.messages.length).toBeLessThan(turns.length - 1);
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 1_024 });
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(countPromptTokens(asOpenAi(sent.json)) + sent.json.max_tokens).toBeLessThanOrEqual(CLAUDE_CONTEXT);
  });

  it('without the transform the conversation goes as it is', async () => {
    await chat({ messages: [system, ...turns], max_tokens: 500 });
    expect(up.requests.at(-1)!.json.messages).toHaveLength(turns.length + 1);
  });

  // OpenRouter's current spelling (openrouter.md §7); @openrouter/sdk sends no `transforms`.
  it('the context-compression plugin is middle-out; enabled: false leaves the conversation as it is', async () => {
    const messages = [system, ...turns];
    for (const plugin of [
      { id: 'context-compression' },
      { id: 'context-compression', engine: 'middle-out' },
    ]) {
      const r = await chat({ messages, max_tokens: 500, plugins: [plugin] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const sent = up.requests.at(-1)!.json;
      expect(sent.messages.length).toBeLessThan(messages.length);
      expect(sent.messages.at(-1)).toEqual(turns.at(-1));
      expect(countPromptTokens(sent) + 500).toBeLessThanOrEqual(CONTEXT);
      expect(sent).not.toHaveProperty('plugins');
      expect(sent).not.toHaveProperty('transforms');
    }
    const off = await chat({
      messages,
      max_tokens: 500,
      plugins: [{ id: 'context-compression', enabled: false }],
    });
    expect(off.status).toBe(200);
    expect(up.requests.at(-1)!.json.messages).toHaveLength(messages.length);
  });

  it('context-compression turned off beside transforms: ["middle-out"] is a 400 naming the plugin', async () => {
    const before = up.requests.length;
    const r = await chat({
      messages: [system, ...turns],
      transforms: ['middle-out'],
      plugins: [{ id: 'context-compression', enabled: false }],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('plugins.0.enabled');
    expect(up.requests.length).toBe(before);
  });

  it('cuts a 4 MB message in its middle, keeping both ends', async () => {
    const body = `BEGIN ${text(4_000_000, true, 9)} FINIS`;
    const r = await chat({ messages: [system, { role: 'user', content: body }], transforms: ['middle-out'] });
    expect(r.status).toBe(200);
    const sent = up.requests.at(-1)!.json;
    const kept: string = sent.messages[1].content;
    expect(kept.startsWith('BEGIN ')).toBe(true);
    expect(kept.endsWith(' FINIS')).toBe(true);
    expect(kept).toContain(TRUNCATION_MARKER);
    expect(countPromptTokens(sent)).toBeLessThanOrEqual(CONTEXT);
    expect(countPromptTokens(sent)).toBeGreaterThan(CONTEXT * 0.8);
  });

  it('a system prompt alone over the context is a 400 naming messages', async () => {
    const before = up.requests.length;
    const r = await chat({
      messages: [{ role: 'system', content: text(60_000, false, 4) }, turns[0]],
      transforms: ['middle-out'],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('messages');
    expect(r.body.error.message).toMatch(/does not fit/);
    expect(up.requests.length).toBe(before);
  });
});

describe('middle-out and the models fallback', () => {
  const big = { role: 'system', content: 'word '.repeat(300) };
  const hi = { role: 'user', content: 'hi' };

  it('a model the prompt cannot fit even after middle-out is skipped: the next model serves it', async () => {
    const before = up.requests.length;
    const r = await chat({
      model: 'acme/tiny',
      models: ['acme/big'],
      messages: [big, hi],
      transforms: ['middle-out'],
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('acme/big');
    expect(up.requests.length).toBe(before + 1);
    expect(up.requests.at(-1)!.json).toMatchObject({ model: 'acme/big', messages: [big, hi] });
    // Nothing was sent to the skipped model: no try in the trail.
    expect(r.headers.get('x-modelgate-attempts')).toBe('up/acme/big=ok');
  });

  it('when no model can take the prompt, the 400 says so and nothing is sent', async () => {
    const before = up.requests.length;
    const r = await chat({
      model: 'acme/tiny',
      models: ['acme/short'],
      messages: [{ role: 'system', content: text(60_000, false, 4) }, hi],
      transforms: ['middle-out'],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('messages');
    expect(r.body.error.message).toMatch(/does not fit acme\/short .*even after middle-out/);
    expect(up.requests.length).toBe(before);
  });
});

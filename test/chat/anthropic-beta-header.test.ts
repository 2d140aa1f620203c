import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  fixture,
  fixtureJson,
  lastSentTo,
  model,
  oaCompletion,
  sseSteps,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/**
 * OpenRouter's `x-anthropic-beta` request header on the OpenAI-shaped ingresses
 * (/v1/chat/completions, /api/v1/chat/completions, /v1/responses): its values reach an Anthropic
 * upstream as `anthropic-beta`, under the channel's `client_betas` allow-list and beside its
 * `beta`, as the Anthropic ingress's `anthropic-beta` does, and no other upstream. The fake
 * upstream answers Anthropic's Messages API (recorded answers; `claude-overloaded` is Anthropic's
 * 529) and OpenAI's Chat Completions, and records what it gets.
 */

let up: FakeUpstream;
let c: ChatGateway;

const anthropicChannel = (
  name: string,
  settings: Record<string, unknown> = {},
  upstream = 'claude-sonnet-4-5',
) => ({
  name,
  kind: 'anthropic',
  base_url: up.url,
  keys: ['sk-ant'],
  models: [`acme/${name}`],
  model_mapping: { [`acme/${name}`]: upstream },
  settings,
});

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/messages': (req) => {
      if (req.json?.model === 'claude-overloaded')
        return { status: 529, json: fixtureJson('anthropic/error-529.json') };
      if (req.json?.stream === true) return { sse: sseSteps(fixture('anthropic/chat-stream.sse')) };
      return { json: fixtureJson('anthropic/chat.json') };
    },
    'POST /v1/chat/completions': { json: oaCompletion('from gpt') },
  });
  c = await startChatGateway({
    channels: [
      anthropicChannel('claude'),
      anthropicChannel('claude-beta', { beta: 'context-1m-2025-08-07' }),
      anthropicChannel('claude-open', { client_betas: ['*'] }),
      anthropicChannel('claude-closed', { client_betas: [] }),
      anthropicChannel('claude-down', {}, 'claude-overloaded'),
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/gpt'] },
    ],
    models: [
      ...['claude', 'claude-beta', 'claude-open', 'claude-closed', 'claude-down'].map((n) =>
        model(`acme/${n}`, { max_completion_tokens: 64_000 }),
      ),
      model('acme/gpt'),
    ],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const INTERLEAVED = 'interleaved-thinking-2025-05-14';
const BETAS = `${INTERLEAVED},fine-grained-tool-streaming-2025-05-14`;
const sentTo = (path: string) => lastSentTo(up, path);
const chat = (body: Record<string, unknown>, beta?: string, path = '/v1/chat/completions') =>
  c.gw.call('POST', path, {
    token: c.key,
    headers: beta === undefined ? {} : { 'x-anthropic-beta': beta },
    body: { max_tokens: 100, messages: userMsg('hello'), ...body },
  });

describe('x-anthropic-beta on /v1/chat/completions', () => {
  it('reaches an Anthropic upstream as anthropic-beta (the OpenAI SDK’s extra headers, as sent)', async () => {
    const client = new OpenAI({ baseURL: `${c.gw.url}/v1`, apiKey: c.key, maxRetries: 0 });
    const answer = await client.chat.completions.create(
      { model: 'acme/claude', max_tokens: 100, messages: userMsg('hello') },
      { headers: { 'x-anthropic-beta': BETAS } },
    );
    expect(answer.choices[0]!.message.content).toBe('Hello! How can I help you today?');
    const sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBe(BETAS);
    expect(sent.headers['x-anthropic-beta']).toBeUndefined();
  });

  it('is merged with the channel’s beta, under /api/v1 and streamed too', async () => {
    const r = await chat({ model: 'acme/claude-beta' }, BETAS, '/api/v1/chat/completions');
    expect(r.status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(`context-1m-2025-08-07,${BETAS}`);

    const s = await chat({ model: 'acme/claude-beta', stream: true }, INTERLEAVED);
    expect(s.status).toBe(200);
    expect(sentTo('/v1/messages').json.stream).toBe(true);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(`context-1m-2025-08-07,${INTERLEAVED}`);
  });

  it('forwards only the betas the channel’s client_betas allows (by default those billed by tokens)', async () => {
    // Long-context rates, the account's files: not for any key holder to turn on.
    const asked = `context-1m-2025-08-07,files-api-2025-04-14,${INTERLEAVED}`;
    expect((await chat({ model: 'acme/claude' }, asked)).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(INTERLEAVED);
    expect((await chat({ model: 'acme/claude-open' }, asked)).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(asked);
    expect((await chat({ model: 'acme/claude-closed' }, asked)).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBeUndefined();
    // The channel's own beta is its operator's: sent as configured whatever the client asked.
    expect((await chat({ model: 'acme/claude-beta' }, 'files-api-2025-04-14')).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe('context-1m-2025-08-07');
  });

  it('is read as /v1/messages reads anthropic-beta: trimmed, each once, empty or unknown values no error', async () => {
    expect((await chat({ model: 'acme/claude' }, ` ${INTERLEAVED} ,, ${INTERLEAVED}, `)).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(INTERLEAVED);
    expect((await chat({ model: 'acme/claude' }, ' , ')).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBeUndefined();
    // Not a beta Anthropic knows: the default list drops it; a channel open to all passes it on,
    // and Anthropic answers for it, as for /v1/messages.
    expect((await chat({ model: 'acme/claude' }, 'no such beta')).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBeUndefined();
    expect((await chat({ model: 'acme/claude-open' }, 'no such beta')).status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe('no such beta');
  });

  it('never reaches a non-Anthropic upstream, a fallback from an Anthropic one included', async () => {
    expect((await chat({ model: 'acme/gpt' }, BETAS)).status).toBe(200);
    expect(sentTo('/v1/chat/completions').headers['anthropic-beta']).toBeUndefined();

    const before = up.requests.length;
    const r = await chat({ model: 'acme/claude-down', models: ['acme/gpt'] }, BETAS);
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('from gpt');
    const [anthropic, openai] = up.requests.slice(before);
    expect(anthropic!.path).toBe('/v1/messages');
    expect(anthropic!.headers['anthropic-beta']).toBe(BETAS);
    expect(openai!.path).toBe('/v1/chat/completions');
    expect(openai!.headers['anthropic-beta']).toBeUndefined();
    expect(openai!.headers['x-anthropic-beta']).toBeUndefined();
    expect(JSON.stringify(openai!.json)).not.toContain('beta');
  });

  it('comes from the header only: a body’s anthropic_beta is not read', async () => {
    // A string there once reached the Anthropic adapter as a list: a 500.
    for (const anthropic_beta of [INTERLEAVED, [INTERLEAVED], { x: 1 }]) {
      const r = await chat({ model: 'acme/claude', anthropic_beta });
      expect(r.status).toBe(200);
      expect(sentTo('/v1/messages').headers['anthropic-beta']).toBeUndefined();
    }
    const r = await chat(
      { model: 'acme/claude-open', anthropic_beta: ['files-api-2025-04-14'] },
      INTERLEAVED,
    );
    expect(r.status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(INTERLEAVED);
  });
});

describe('the interleaved-thinking beta from x-anthropic-beta', () => {
  const thinking = (model: string) =>
    chat({ model, max_tokens: 8000, reasoning: { max_tokens: 20_000 } }, INTERLEAVED);

  it('sends a reasoning budget at or past max_tokens as asked, where it reaches Anthropic', async () => {
    expect((await thinking('acme/claude')).status).toBe(200);
    const sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBe(INTERLEAVED);
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 20_000 });
    expect(sent.json.max_tokens).toBe(8000);
  });

  it('raises max_tokens to hold the budget where the channel does not forward it', async () => {
    expect((await thinking('acme/claude-closed')).status).toBe(200);
    const sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 20_000 });
    expect(sent.json.max_tokens).toBe(28_000);
  });
});

describe('x-anthropic-beta on /v1/responses', () => {
  const respond = (model: string, beta: string) =>
    c.gw.call('POST', '/v1/responses', {
      token: c.key,
      headers: { 'x-anthropic-beta': beta },
      body: { model, input: 'hello', max_output_tokens: 100 },
    });

  it('reaches an Anthropic upstream the same way, and no other', async () => {
    const r = await respond('acme/claude', `files-api-2025-04-14,${BETAS}`);
    expect(r.status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(BETAS);
    expect((await respond('acme/gpt', BETAS)).status).toBe(200);
    expect(sentTo('/v1/chat/completions').headers['anthropic-beta']).toBeUndefined();
  });
});

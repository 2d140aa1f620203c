import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  model,
  oaCompletion,
  openaiChannel,
  requestLogs,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * An embedding model named on a chat endpoint (docs/routing.md, "Embedding models on chat
 * endpoints"): invalid input, a 400 naming `model` in each endpoint's own error shape, not a
 * retryable 503 claiming no upstream serves it (an enabled Voyage channel does, for embeddings).
 * In a `models` list an embedding model is skipped; the 400 comes when no listed model can chat.
 */
const EMBED = 'voyageai/voyage-3.5';
const CHAT = 'acme/chat';

let voyage: FakeUpstream;
let oa: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  voyage = await startFakeUpstream();
  oa = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('from oa') } });
  c = await startChatGateway({
    channels: [
      { name: 'voy', kind: 'voyage', base_url: voyage.url, keys: ['pa-key'], models: [EMBED] },
      openaiChannel('oa', oa, [CHAT]),
    ],
    models: [model(CHAT)],
    gateway: { discover_models: false, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await voyage?.close();
  await oa?.close();
});

const post = (path: string, body: Record<string, unknown>) => c.gw.call('POST', path, { token: c.key, body });
const NOT_CHAT = `model: ${EMBED} is an embedding model, not a chat model (use /v1/embeddings)`;

describe('an embedding model on the chat endpoints', () => {
  it('/v1/chat/completions: 400 naming model, streamed or not, and nothing is sent upstream', async () => {
    for (const stream of [false, true]) {
      const r = await post('/v1/chat/completions', { model: EMBED, messages: userMsg('hi'), stream });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toMatchObject({
        code: 400,
        type: 'invalid_request_error',
        param: 'model',
        message: NOT_CHAT,
      });
    }
    expect(voyage.requests).toHaveLength(0);
    const row = (await requestLogs(c)).find((l) => l.model === EMBED);
    expect(row).toMatchObject({ endpoint: 'chat.completions', status: 400 });
  });

  it('/v1/responses: 400 naming model', async () => {
    const r = await post('/v1/responses', { model: EMBED, input: 'hi' });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model', message: NOT_CHAT });
  });

  it('/v1/messages and /v1/messages/count_tokens: 400 invalid_request_error', async () => {
    const body = { model: EMBED, max_tokens: 10, messages: userMsg('hi') };
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const r = await post(path, body);
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: NOT_CHAT },
      });
    }
  });

  it('a variant of an embedding model is the same 400', async () => {
    const r = await post('/v1/chat/completions', { model: `${EMBED}:nitro`, messages: userMsg('hi') });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ param: 'model', message: NOT_CHAT });
  });

  it('in a models list it is skipped: a chat model listed with it serves', async () => {
    const first = await post('/v1/chat/completions', {
      model: EMBED,
      models: [CHAT],
      messages: userMsg('hi'),
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ model: CHAT, provider: 'oa' });
    const after = await post('/v1/chat/completions', {
      model: CHAT,
      models: [EMBED],
      messages: userMsg('hi'),
    });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-modelgate-attempts')).toBe(`oa/${CHAT}=ok`);
  });

  it('with no chat model listed (the others unknown) it is the 400, naming the field that listed it', async () => {
    const r = await post('/v1/chat/completions', {
      model: EMBED,
      models: ['acme/nope'],
      messages: userMsg('hi'),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ param: 'model', message: NOT_CHAT });
    const listed = await post('/v1/chat/completions', {
      model: 'acme/nope',
      models: [EMBED],
      messages: userMsg('hi'),
    });
    expect(listed.status, JSON.stringify(listed.body)).toBe(400);
    expect(listed.body.error).toMatchObject({
      param: 'models',
      message: `models: ${EMBED} is an embedding model, not a chat model (use /v1/embeddings)`,
    });
  });

  it('an unknown model is still a 404', async () => {
    const r = await post('/v1/chat/completions', { model: 'acme/nope', messages: userMsg('hi') });
    expect(r.status).toBe(404);
  });
});

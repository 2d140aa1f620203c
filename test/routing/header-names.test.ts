import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  requestLogs,
  sse,
  startChatGateway,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * Upstream and model names are any text an admin typed; the `x-modelgate-attempts` header that
 * names them takes printable ASCII only (Node throws on anything past Latin-1 when the head is
 * written). A stream through such an upstream once never settled its reservation, never logged
 * and kept writing keep-alives: now the names are percent-encoded.
 */
let up: FakeUpstream;
let c: ChatGateway;
const NAME = '通道A — backup';
const USAGE = { prompt_tokens: 5, completion_tokens: 2 };

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json.stream
        ? {
            sse: sse([
              oaChunk({ role: 'assistant', content: 'Hi' }),
              oaChunk({}, 'stop'),
              { ...oaChunk({}), choices: [], usage: { ...USAGE, total_tokens: 7 } },
            ]),
          }
        : { json: oaCompletion('Hi', USAGE) },
  });
  c = await startChatGateway(
    {
      channels: [
        {
          name: NAME,
          kind: 'openai-compatible',
          base_url: `${up.url}/v1`,
          keys: ['k'],
          models: ['acme/ü-model'],
        },
      ],
      models: [model('acme/ü-model')],
      gateway: { retry_base_ms: 1, discover_models: false },
    },
    { quota_limit: 1 },
  );
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const ENCODED = '%E9%80%9A%E9%81%93A %E2%80%94 backup/acme/%C3%BC-model=ok';

describe('upstream and model names outside ASCII', () => {
  it('stream: 200, the names percent-encoded in the header, settled and logged', async () => {
    const openai = new OpenAI({ baseURL: `${c.gw.url}/v1`, apiKey: c.key, maxRetries: 0 });
    const { data: stream, response } = await openai.chat.completions
      .create({ model: 'acme/ü-model', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    let text = '';
    for await (const ch of stream) text += ch.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hi');
    expect(response.headers.get('x-modelgate-attempts')).toBe(ENCODED);
    expect(decodeURIComponent(response.headers.get('x-modelgate-attempts')!)).toBe(`${NAME}/acme/ü-model=ok`);
    const row = (await requestLogs(c)).find((l) => l.model === 'acme/ü-model' && l.stream);
    expect(row).toMatchObject({ status: 200, prompt_tokens: 5, completion_tokens: 2 });
    expect(row.cost_micros ?? row.cost).toBeTruthy();
  });

  it('non-stream: the same header', async () => {
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'acme/ü-model', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-modelgate-attempts')).toBe(ENCODED);
  });

  it('the key spent what the logs say: nothing left reserved', async () => {
    await c.gw.services.requestLogs.flush();
    const logs = await requestLogs(c);
    const keys = await c.gw.call('GET', '/api/key', { cookie: c.cookie });
    const key = keys.body.data.find((k: any) => k.name === 'chat');
    const logged = logs.filter((l) => l.key_id === key.id).reduce((n, l) => n + (l.cost ?? 0), 0);
    expect(key.quota_used).toBeCloseTo(logged, 9);
  });
});

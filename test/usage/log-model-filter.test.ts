import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { model, oaCompletion } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The `model` filter of `GET /api/log` and `/api/log/stats` finds a model by any name it answers
 * to (docs/quotas.md, "Reading them"): a success is logged under the registry id, a refusal
 * before routing under the name the client sent. Before, `model=big` (an alias the client sends)
 * found nothing, and `model=acme/chat-large` missed the refusals of requests that said `big`.
 */
let up: FakeUpstream;
let gw: TestGateway;
let root: string;
let key: string;
let narrowKey: string;

beforeAll(async () => {
  up = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('hi') } });
  gw = await startTestGateway({
    gateway: { discover_models: false },
    channels: [
      {
        name: 'up',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['acme/chat-large', 'acme/other'],
      },
    ],
    models: [model('acme/chat-large', { aliases: ['big'] }), model('acme/other')],
  });
  root = await gw.login();
  const k = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'all' } });
  key = k.body.data.key;
  const n = await gw.call('POST', '/api/key', {
    cookie: root,
    body: { name: 'narrow', allowed_models: ['acme/other'] },
  });
  narrowKey = n.body.data.key;
  const chat = (token: string, m: string) =>
    gw.call('POST', '/v1/chat/completions', {
      token,
      body: { model: m, messages: [{ role: 'user', content: 'x' }] },
    });
  expect((await chat(key, 'big')).status).toBe(200); // logged as acme/chat-large
  expect((await chat(key, 'acme/chat-large')).status).toBe(200);
  expect((await chat(narrowKey, 'big')).status).toBe(403); // logged as big, the name sent
  expect((await chat(key, 'acme/other')).status).toBe(200);
  expect((await chat(key, 'no-such-model')).status).toBe(404); // logged as sent
  await gw.services.requestLogs.flush();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const logs = async (m: string) => {
  const r = await gw.call('GET', `/api/log?model=${encodeURIComponent(m)}`, { cookie: root });
  expect(r.status).toBe(200);
  return (r.body.data as Array<{ model: string; status: number }>)
    .map((x) => `${x.model} ${x.status}`)
    .sort();
};

describe('the request-log model filter', () => {
  it('finds the rows of a model by its alias, its registry id and its plain name alike', async () => {
    const all = ['acme/chat-large 200', 'acme/chat-large 200', 'big 403'];
    expect(await logs('big')).toEqual(all);
    expect(await logs('acme/chat-large')).toEqual(all);
    expect(await logs('chat-large')).toEqual(all);
    expect(await logs('acme/other')).toEqual(['acme/other 200']);
  });

  it('finds a name no model answers to as it was logged', async () => {
    expect(await logs('no-such-model')).toEqual(['no-such-model 404']);
    expect(await logs('nothing-at-all')).toEqual([]);
  });

  it('applies to the stats too', async () => {
    const r = await gw.call('GET', '/api/log/stats?group=model&model=big', { cookie: root });
    expect(r.status).toBe(200);
    const byBucket = Object.fromEntries(
      (r.body.data as Array<{ bucket: string; requests: number }>).map((b) => [b.bucket, b.requests]),
    );
    expect(byBucket).toEqual({ 'acme/chat-large': 2, big: 1 });
  });
});

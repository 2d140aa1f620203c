import { model, oaCompletion } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/** A gateway with three signed-in users, for the tests of who may set what on a key. */
export interface KeyOwnersGateway {
  up: FakeUpstream;
  gw: TestGateway;
  /** Session cookies: root, the admin `ada` (role 10), the user `bob`. */
  root: string;
  admin: string;
  bob: string;
  bobId: number;
  /** PUT /api/key as `cookie`, changing key `id` by `body`. */
  put(cookie: string, id: number, body: Record<string, unknown>): ReturnType<TestGateway['call']>;
  /** One chat request to `model` with the API key `key`. */
  chat(key: string, model: string): ReturnType<TestGateway['call']>;
  close(): Promise<void>;
}

/**
 * Starts a gateway serving `served` (model discovery off) from one OpenAI-compatible channel to a
 * fake upstream that answers every chat with "hi", with root, the admin ada and the user bob
 * signed in.
 */
export async function startKeyOwnersGateway(served: string[]): Promise<KeyOwnersGateway> {
  const up = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('hi') } });
  const gw = await startTestGateway({
    gateway: { discover_models: false },
    channels: [
      { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: served },
    ],
    models: served.map((id) => model(id)),
  });
  const root = await gw.login();
  await gw.call('POST', '/api/user', {
    cookie: root,
    body: { username: 'ada', password: 'ada-pass-1', role: 10 },
  });
  const b = await gw.call('POST', '/api/user', {
    cookie: root,
    body: { username: 'bob', password: 'bob-pass-1' },
  });
  return {
    up,
    gw,
    root,
    admin: await gw.login('ada', 'ada-pass-1'),
    bob: await gw.login('bob', 'bob-pass-1'),
    bobId: b.body.data.id,
    put: (cookie, id, body) => gw.call('PUT', '/api/key', { cookie, body: { id, ...body } }),
    chat: (key, m) =>
      gw.call('POST', '/v1/chat/completions', {
        token: key,
        body: { model: m, messages: [{ role: 'user', content: 'x' }] },
      }),
    close: async () => {
      await gw.close();
      await up.close();
    },
  };
}

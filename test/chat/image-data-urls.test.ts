import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixtureJson, model, oaCompletion, startChatGateway } from './chat-helpers.js';

/**
 * `image_url` parts holding data URLs, from the client to each upstream kind, asserted on what
 * the loopback fake received: a data URL that is not a base64 image is the gateway's 400 naming
 * the part (sent nowhere, as OpenAI itself refuses it); an image type Anthropic or Gemini does not
 * take skips that upstream for the model's others, and is a 400 naming the part when no other
 * upstream serves the model.
 */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': () => ({ json: oaCompletion('a picture') }),
    'POST /v1/messages': () => ({ json: fixtureJson('anthropic/chat.json') }),
    'POST /v1beta/models/gemini-2.5-flash:generateContent': () => ({ json: fixtureJson('gemini/chat.json') }),
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['t/oa', 't/mixed'],
      },
      {
        name: 'ge',
        kind: 'gemini',
        base_url: up.url,
        keys: ['k'],
        models: ['t/ge'],
        model_mapping: { 't/ge': 'gemini-2.5-flash' },
      },
      {
        name: 'an',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['k'],
        models: ['t/an', 't/mixed'],
        model_mapping: { 't/an': 'claude-sonnet-4-5', 't/mixed': 'claude-sonnet-4-5' },
        priority: 10,
      },
    ],
    models: [model('t/oa'), model('t/ge'), model('t/an'), model('t/mixed')],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const chat = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
const ask = { type: 'text', text: 'What is in this?' };
const image = (url: string) => ({ type: 'image_url', image_url: { url } });
const user = (...parts: unknown[]) => [{ role: 'user', content: [ask, ...parts] }];
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64');
const PDF = 'JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK';

/** The bodies the upstream received for `body`, and the gateway's answer. */
async function sentFor(body: Record<string, unknown>) {
  const before = up.requests.length;
  const r = await chat(body);
  return { r, sent: up.requests.slice(before) };
}

describe('a data URL that is not a base64 image: the gateway 400 naming the part, sent nowhere', () => {
  it.each([
    ['a PDF', `data:application/pdf;base64,${PDF}`, 'application/pdf is not an image'],
    ['text', 'data:text/plain;base64,aGVsbG8=', 'text/plain is not an image'],
    ['no media type', `data:;base64,${PNG}`, 'no media type is not an image'],
    ['not base64', 'data:image/png,notbase64', 'must be base64'],
    ['base64 flag but other characters', 'data:image/png;base64,not*base64!', 'not base64'],
    ['no data', 'data:image/png;base64,', 'holds no data'],
    ['no comma', 'data:image/png;base64', 'comma'],
  ])('%s', async (_what, url, why) => {
    for (const id of ['t/oa', 't/ge', 't/an', 't/mixed']) {
      const { r, sent } = await sentFor({
        model: id,
        messages: [{ role: 'system', content: 'hi' }, ...user(image(url))],
      });
      expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.error.param, id).toBe('messages.1.content.1.image_url.url');
      expect(r.body.error.message, id).toContain('messages.1.content.1.image_url.url: ');
      expect(r.body.error.message, id).toContain(why);
      expect(sent, id).toHaveLength(0);
    }
  });
});

describe('base64 images', () => {
  it('go to every kind as before (png as jpg spelt, uppercase)', async () => {
    const parts = [image(`data:image/png;base64,${PNG}`), image(`data:IMAGE/JPG;base64,${PNG}`)];
    const oa = await sentFor({ model: 't/oa', messages: user(...parts) });
    expect(oa.r.status).toBe(200);
    expect(oa.sent[0]!.json.messages[0].content).toEqual([ask, ...parts]);
    const an = await sentFor({ model: 't/an', messages: user(...parts) });
    expect(an.r.status).toBe(200);
    expect(an.sent[0]!.json.messages[0].content.slice(1)).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: PNG } },
    ]);
    const ge = await sentFor({ model: 't/ge', messages: user(...parts) });
    expect(ge.r.status).toBe(200);
    expect(ge.sent[0]!.json.contents[0].parts.slice(1)).toEqual([
      { inlineData: { mimeType: 'image/png', data: PNG } },
      { inlineData: { mimeType: 'image/jpeg', data: PNG } },
    ]);
  });

  it('of a type Anthropic does not take (SVG): the model goes to its other upstream', async () => {
    // A PNG goes to Anthropic, the channel tried first.
    const png = await sentFor({ model: 't/mixed', messages: user(image(`data:image/png;base64,${PNG}`)) });
    expect(png.r.status).toBe(200);
    expect(png.sent.map((s) => s.path)).toEqual(['/v1/messages']);
    const svg = image(`data:image/svg+xml;base64,${SVG}`);
    const { r, sent } = await sentFor({ model: 't/mixed', messages: user(svg) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(sent.map((s) => s.path)).toEqual(['/v1/chat/completions']);
    expect(sent[0]!.json.messages[0].content).toEqual([ask, svg]);
  });

  it.each([
    [
      't/an',
      'image/svg+xml',
      'Anthropic upstreams do not take image/svg+xml images (only jpeg, png, gif, webp)',
    ],
    ['t/an', 'image/bmp', 'Anthropic upstreams do not take image/bmp'],
    [
      't/ge',
      'image/svg+xml',
      'Gemini upstreams do not take image/svg+xml images (only png, jpeg, webp, heic, heif)',
    ],
    ['t/ge', 'image/gif', 'Gemini upstreams do not take image/gif'],
  ])('%s with %s and no other upstream: a 400 naming the part, sent nowhere', async (id, type, message) => {
    const { r, sent } = await sentFor({
      model: id,
      messages: user(image(`data:image/png;base64,${PNG}`), image(`data:${type};base64,${SVG}`)),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.param).toBe('messages.0.content.2.image_url.url');
    expect(r.body.error.message).toContain(`messages.0.content.2.image_url.url: ${message}`);
    expect(sent).toHaveLength(0);
  });

  it('a GIF still goes to Anthropic, an SVG to an OpenAI-compatible upstream', async () => {
    const gif = image(`data:image/gif;base64,${PNG}`);
    const an = await sentFor({ model: 't/an', messages: user(gif) });
    expect(an.r.status).toBe(200);
    expect(an.sent[0]!.json.messages[0].content[1].source.media_type).toBe('image/gif');
    const svg = image(`data:image/svg+xml;base64,${SVG}`);
    const oa = await sentFor({ model: 't/oa', messages: user(svg) });
    expect(oa.r.status).toBe(200);
    expect(oa.sent[0]!.json.messages[0].content).toEqual([ask, svg]);
  });
});

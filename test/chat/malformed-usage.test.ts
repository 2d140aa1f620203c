import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countPromptTokens, countTextTokens } from '../../src/gateway/chat/tokens.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  model,
  oaChunk,
  rawStream,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/**
 * An OpenAI-compatible upstream whose usage object holds a count that is not one (a string, a
 * negative or fractional number, null, or none): that part is counted locally, as for usage not
 * reported at all, and billed, logged and shown to the client alike; the well-formed counts stay
 * the upstream's. The fake answers ANSWER, with the usage USAGES holds for the prompt's text.
 */
const ANSWER =
  'The gateway counts this answer itself whenever the upstream reports a count that is not a count.';
const USAGES: Record<string, Record<string, unknown>> = {
  'string completion': { prompt_tokens: 7, completion_tokens: '12', total_tokens: 19 },
  'negative completion': { prompt_tokens: 7, completion_tokens: -5, total_tokens: 2 },
  'null completion': { prompt_tokens: 7, completion_tokens: null, total_tokens: 7 },
  'fractional completion': { prompt_tokens: 7, completion_tokens: 2.5 },
  'no completion': { prompt_tokens: 7 },
  'string prompt': { prompt_tokens: 'n/a', completion_tokens: 8, total_tokens: 8 },
  'negative prompt': { prompt_tokens: -1, completion_tokens: 8 },
};
/** Answers whose prompt and completion counts are well-formed. */
const WELL_FORMED: Record<string, Record<string, unknown>> = {
  valid: { prompt_tokens: 7, completion_tokens: 8, total_tokens: 15 },
  'string total': { prompt_tokens: 7, completion_tokens: 8, total_tokens: '15' },
};

function answer(word: string, stream: boolean): FakeAnswer {
  const usage = USAGES[word] ?? WELL_FORMED[word];
  if (!usage) return { status: 400, json: { error: { message: `no answer scripted for ${word}` } } };
  if (!stream)
    return {
      json: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1700000000,
        model: 'up-model',
        choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }],
        usage,
      },
    };
  return {
    sse: sse([
      oaChunk({ role: 'assistant', content: ANSWER.slice(0, 30) }),
      oaChunk({ content: ANSWER.slice(30) }),
      oaChunk({}, 'stop'),
      { ...oaChunk({}), choices: [], usage },
    ]),
  };
}

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      answer(String(req.json.messages.at(-1).content), req.json.stream === true),
  });
  c = await startChatGateway({
    channels: [
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    // $1 per million prompt tokens, $2 per million completion tokens: 1 and 2 micro-USD a token.
    models: [model('acme/m', { pricing: { prompt: '0.000001', completion: '0.000002' } })],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const chat = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
const spentMicros = async () => {
  await c.gw.services.requestLogs.flush();
  const used = (await c.gw.call('GET', '/api/key', { cookie: c.cookie })).body.data[0].quota_used as number;
  return Math.round(used * 1e6);
};

const generated = countTextTokens(ANSWER);

/** What the request is billed: the upstream's well-formed counts, the others counted locally. */
function expected(word: string) {
  // 'string prompt', 'negative prompt': the prompt is counted, the completion reported (8);
  // the others: the prompt reported (7), the completion counted.
  const prompt = word.endsWith('prompt') ? localPrompt() : 7;
  const completion = word.endsWith('prompt') ? 8 : generated;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
/** The prompt as the upstream received it, counted locally. */
const localPrompt = () => countPromptTokens(up.requests.at(-1)!.json);

describe('a malformed count in the usage an upstream reports is counted locally', () => {
  it('the local count of the answer is neither 0 nor any count reported', () => {
    expect(generated).toBeGreaterThan(12);
  });

  describe.each(Object.keys(USAGES))('%s', (word) => {
    it('non-streamed: the client, the request log and the quota see the local count', async () => {
      const before = await spentMicros();
      const r = await chat({ model: 'acme/m', messages: userMsg(word), usage: { include: true } });
      expect(r.status).toBe(200);
      const want = expected(word);
      const micros = want.prompt_tokens + 2 * want.completion_tokens;
      expect(r.body.usage).toMatchObject({ ...want, cost: micros / 1e6 });
      expect((await requestLogs(c))[0]).toMatchObject({
        stream: false,
        prompt_tokens: want.prompt_tokens,
        completion_tokens: want.completion_tokens,
        cost: micros / 1e6,
      });
      expect((await spentMicros()) - before).toBe(micros);
      // Without usage.include, the plain counts are the same.
      const plain = await chat({ model: 'acme/m', messages: userMsg(word) });
      expect(plain.body.usage).toEqual({ ...expected(word) });
    });

    it('streamed: the same', async () => {
      const before = await spentMicros();
      const s = await rawStream(c, { model: 'acme/m', messages: userMsg(word), usage: { include: true } });
      expect(s.res.status).toBe(200);
      const want = expected(word);
      const micros = want.prompt_tokens + 2 * want.completion_tokens;
      expect(s.chunks.at(-1).usage).toMatchObject({ ...want, cost: micros / 1e6 });
      expect((await requestLogs(c))[0]).toMatchObject({
        stream: true,
        prompt_tokens: want.prompt_tokens,
        completion_tokens: want.completion_tokens,
        cost: micros / 1e6,
      });
      expect((await spentMicros()) - before).toBe(micros);
    });
  });

  it('a malformed total alone is made the sum of the counts, which stay as reported', async () => {
    const r = await chat({ model: 'acme/m', messages: userMsg('string total') });
    expect(r.body.usage).toEqual({ prompt_tokens: 7, completion_tokens: 8, total_tokens: 15 });
    const s = await rawStream(c, {
      model: 'acme/m',
      messages: userMsg('string total'),
      usage: { include: true },
    });
    expect(s.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 8, total_tokens: 15 });
  });

  it('the Anthropic ingress shows the local count too, never a negative one', async () => {
    const r = await c.gw.call('POST', '/v1/messages', {
      token: c.key,
      body: { model: 'acme/m', max_tokens: 100, messages: userMsg('negative completion') },
    });
    expect(r.status).toBe(200);
    expect(r.body.usage).toMatchObject({ input_tokens: 7, output_tokens: generated });
  });

  it('well-formed counts stay exactly as the upstream reported them, streamed and not', async () => {
    const want = { prompt_tokens: 7, completion_tokens: 8, total_tokens: 15, cost: 23 / 1e6 };
    const r = await chat({ model: 'acme/m', messages: userMsg('valid'), usage: { include: true } });
    expect(r.body.usage).toMatchObject(want);
    const s = await rawStream(c, { model: 'acme/m', messages: userMsg('valid'), usage: { include: true } });
    expect(s.chunks.at(-1).usage).toMatchObject(want);
    expect((await requestLogs(c))[0]).toMatchObject({
      prompt_tokens: 7,
      completion_tokens: 8,
      cost: 23 / 1e6,
    });
  });
});

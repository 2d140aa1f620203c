import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  lastSentTo,
  model,
  rawStream,
  sse,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';
import { GEMINI_FORMAT, openrouterChannel, openrouterChunk, SIG_TEXT } from './reasoning-fixtures.js';

/**
 * An OpenAI-compatible upstream whose `reasoning_details` is not a list of objects (a string, or a
 * list with null and string items), streamed or not. OpenRouter's field is a list of objects; the
 * gateway hands the upstream's answer objects on as they are, so such a value reached every
 * reader: /v1/messages answered 500 (`details.filter is not a function`, or a null item's
 * `.format`) and a stream ended in an error. Now the adapter drops the field when it is not a list
 * and the items that are not objects (src/providers/openai-compatible/openai-response.ts), so every
 * surface answers with the rest, and a well-formed item beside garbage (Gemini's thought signature
 * through OpenRouter) still rides and goes back. The fake upstream is OpenRouter in front of
 * Gemini 3; the user text picks the value.
 */
const SIGNED = { type: 'reasoning.encrypted', data: SIG_TEXT, id: null, format: GEMINI_FORMAT, index: 0 };
const DETAILS: Record<string, unknown> = {
  string: 'reasoning.encrypted',
  nulls: [null, SIGNED, 'x', 7],
};
const TEXT = 'Paris is 18°C and sunny.';

const head = {
  id: 'gen-1764552000-Xq3TvJ0cQ1uF9m2wLk7s',
  created: 1764552000,
  model: 'google/gemini-3-flash-preview',
  provider: 'Google AI Studio',
};

function answer(json: any): FakeAnswer {
  const word: string = json.messages.at(-1).content;
  const details = DETAILS[word];
  if (!json.stream)
    return {
      json: {
        ...head,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            logprobs: null,
            finish_reason: 'stop',
            native_finish_reason: 'STOP',
            message: {
              role: 'assistant',
              content: TEXT,
              refusal: null,
              reasoning: null,
              reasoning_details: details,
            },
          },
        ],
        usage: { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 },
      },
    };
  const chunk = (delta: object, finish: string | null = null) => openrouterChunk(delta, finish, head);
  return {
    sse: sse([
      chunk({ role: 'assistant', content: TEXT, reasoning: null, reasoning_details: details }),
      chunk({ role: 'assistant', content: '', reasoning: null, reasoning_details: [] }, 'stop'),
      {
        ...head,
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: 7 },
      },
    ]),
  };
}

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({ 'POST /v1/chat/completions': (req) => answer(req.json) });
  c = await startChatGateway({
    channels: [openrouterChannel(up, { 'acme/or-gem3': 'google/gemini-3-flash-preview' })],
    models: [model('acme/or-gem3')],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const post = async (path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${c.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
};
const messages = (word: string, stream = false, history: unknown[] = []) =>
  post('/v1/messages', {
    model: 'acme/or-gem3',
    max_tokens: 1000,
    stream,
    messages: [...history, { role: 'user', content: word }],
  });
/** A streamed /v1/messages answer's content, put together from its events as the SDK does. */
function assembled(text: string): Array<Record<string, any>> {
  const content: Array<Record<string, any>> = [];
  for (const ev of text.split('\n\n')) {
    const data = ev.split('\n').find((l) => l.startsWith('data: '));
    if (!data) continue;
    const e = JSON.parse(data.slice(6));
    if (e.type === 'error') throw new Error(`stream error: ${JSON.stringify(e)}`);
    if (e.type === 'content_block_start') content[e.index] = { ...e.content_block };
    if (e.type !== 'content_block_delta') continue;
    const b = content[e.index]!;
    if (e.delta.type === 'text_delta') b.text += e.delta.text;
    if (e.delta.type === 'thinking_delta') b.thinking += e.delta.thinking;
    if (e.delta.type === 'signature_delta') b.signature = e.delta.signature;
  }
  return content;
}

describe('reasoning_details that is not a list of objects, from an OpenAI-compatible upstream', () => {
  it('/v1/messages answers with the rest, not a 500, streamed or not', async () => {
    for (const stream of [false, true]) {
      const r = await messages('string', stream);
      expect(r.status, r.text).toBe(200);
      const content = stream ? assembled(r.text) : JSON.parse(r.text).content;
      expect(content).toEqual([{ type: 'text', text: TEXT }]);
    }
  });

  it('/v1/messages skips the items that are not objects and carries the signature beside them', async () => {
    for (const stream of [false, true]) {
      const r = await messages('nulls', stream);
      expect(r.status, r.text).toBe(200);
      const content: Array<Record<string, any>> = stream ? assembled(r.text) : JSON.parse(r.text).content;
      expect(content.map((b) => b.type)).toEqual(['thinking', 'text']);
      expect(content[0]).toEqual({
        type: 'thinking',
        thinking: '',
        signature: expect.stringMatching(/^mgr1\./),
      });

      // Sent back, OpenRouter gets its signature, and nothing of the garbage.
      await messages('again', false, [
        { role: 'user', content: 'nulls' },
        { role: 'assistant', content },
      ]);
      const turn = lastSentTo(up, '/v1/chat/completions').json.messages[1];
      expect(turn.content).toBe(TEXT);
      expect(turn.reasoning_details.filter((d: any) => d.type === 'reasoning.encrypted')).toEqual([SIGNED]);
    }
  });

  it('/v1/chat/completions leaves out what is not a detail, streamed or not', async () => {
    const plain = await post('/v1/chat/completions', { model: 'acme/or-gem3', messages: userMsg('string') });
    expect(plain.status, plain.text).toBe(200);
    expect(JSON.parse(plain.text).choices[0].message).not.toHaveProperty('reasoning_details');
    const listed = await post('/v1/chat/completions', { model: 'acme/or-gem3', messages: userMsg('nulls') });
    expect(JSON.parse(listed.text).choices[0].message.reasoning_details).toEqual([SIGNED]);

    const s1 = await rawStream(c, { model: 'acme/or-gem3', messages: userMsg('string') });
    expect(s1.chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: TEXT, reasoning: null });
    const s2 = await rawStream(c, { model: 'acme/or-gem3', messages: userMsg('nulls') });
    expect(s2.chunks[0].choices[0].delta.reasoning_details).toEqual([SIGNED]);
  });

  it('/v1/responses keeps the signature in encrypted_content, streamed or not', async () => {
    for (const stream of [false, true]) {
      const r = await post('/v1/responses', {
        model: 'acme/or-gem3',
        input: 'nulls',
        stream,
        include: ['reasoning.encrypted_content'],
      });
      expect(r.status, r.text).toBe(200);
      expect(r.text).not.toContain('"type":"error"');
      expect(r.text).toContain('mgr1.');
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  fixture,
  fixtureJson,
  model,
  rawStream,
  startChatGateway,
} from './chat-helpers.js';

/**
 * The names the gateway gives what adapters carry hidden on an answer for the Anthropic ingress (a
 * choice's `stop_sequence`; a message's or a delta's `anthropic_content`, `content_order` and
 * `anthropic_event`: src/gateway/chat/hidden.ts) mean only the gateway's thing. An
 * OpenAI-compatible upstream, whose answer objects the gateway hands on as they are, may put a
 * field of such a name on them, well-formed-looking or garbage: /v1/messages does not take it as
 * the adapter's word (it became the answer's `content`, its blocks' order, its stop sequence, a
 * block of its own), and /v1/chat/completions does not pass it on as an unknown field, streamed
 * or not. Every answer is the one without it. The fake upstream replays a recorded llama.cpp
 * answer (reasoning and content; test/fixtures/openai/reasoning*) with the fields of the scenario
 * the last user text names added to its message (streamed: its content delta) or its choice
 * (streamed: the finishing one), beside an ordinary unknown field, `x_note`, which still reaches
 * chat clients.
 */
interface Scenario {
  /** Where the fields go: the message (a stream's content delta) or the choice (its final one). */
  at: 'message' | 'choice';
  fields: Record<string, unknown>;
}

/** The recorded answer with `s`'s fields added, as the upstream's own JSON text. */
function answer(s: Scenario, stream: boolean) {
  if (!stream) {
    const body = fixtureJson('openai/reasoning.json');
    const choice = body.choices[0];
    Object.assign(s.at === 'message' ? choice.message : choice, s.fields);
    return { json: body };
  }
  const steps = fixture('openai/reasoning-stream.sse')
    .split(/(?<=\n\n)/)
    .filter((e) => e.trim() !== '');
  return {
    sse: steps.map((step) => {
      const data = step.slice('data: '.length, -2);
      if (data === '[DONE]') return step;
      const chunk = JSON.parse(data);
      const choice = chunk.choices[0];
      if (!choice) return step;
      if (s.at === 'message' && typeof choice.delta.content === 'string')
        Object.assign(choice.delta, s.fields);
      else if (s.at === 'choice' && choice.finish_reason !== null) Object.assign(choice, s.fields);
      else return step;
      return `data: ${JSON.stringify(chunk)}\n\n`;
    }),
  };
}

/**
 * Scenarios by number: the user text names one as `answer NN`, the same length for all, so the
 * prompt (and the input count /v1/messages streams estimate from it) is the same for each.
 */
const scenarios: Scenario[] = [];
function said(s: Scenario) {
  scenarios.push(s);
  return [{ role: 'user', content: `answer ${String(scenarios.length - 1).padStart(3, '0')}` }];
}
const named = (json: any): Scenario => {
  const content = json.messages.at(-1).content;
  const text: string = typeof content === 'string' ? content : content[0].text;
  return scenarios[Number(text.slice('answer '.length))]!;
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => answer(named(req.json), req.json.stream === true),
  });
  c = await startChatGateway({
    channels: [
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['t/qwen'] },
    ],
    models: [model('t/qwen')],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

/** The request's one stop sequence: a `stop_sequence` naming it would be believed. */
const STOP = 'END';

async function chat(s: Scenario) {
  const r = await c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: 't/qwen', messages: said(s), stop: [STOP] },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function chatStream(s: Scenario) {
  const r = await rawStream(c, { model: 't/qwen', messages: said(s), stop: [STOP] });
  expect(r.res.status).toBe(200);
  expect(r.events.at(-1)).toBe('[DONE]');
  return r;
}

const messagesBody = (s: Scenario) => ({
  model: 't/qwen',
  max_tokens: 100,
  messages: said(s),
  stop_sequences: [STOP],
});

async function messages(s: Scenario) {
  const r = await c.gw.call('POST', '/v1/messages', { token: c.key, body: messagesBody(s) });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const { id: _, ...rest } = r.body;
  return rest;
}

/** A raw /v1/messages stream's text, the message id taken out (each answer has its own). */
async function messagesStream(s: Scenario) {
  const res = await fetch(`${c.gw.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...messagesBody(s), stream: true }),
  });
  expect(res.status).toBe(200);
  return (await res.text()).replace(/"id":"msg_[^"]*"/g, '"id":"msg"');
}

const NOTE = { x_note: 'kept' };

/** [name, where the gateway hides it, value] */
const CASES: Array<[string, Scenario['at'], unknown]> = [
  ['anthropic_content', 'message', [{ type: 'text', text: 'INJECTED' }]],
  ['anthropic_content', 'message', 'garbage'],
  ['anthropic_content', 'message', null],
  [
    'content_order',
    'message',
    // The recorded answer's own pieces, text first: Anthropic clients would get its thinking last.
    [
      { type: 'text', text: '2 + 2 = 4.' },
      { type: 'reasoning', text: 'The user asks 2+2. That is 4.' },
    ],
  ],
  ['content_order', 'message', 'garbage'],
  ['content_order', 'message', { type: 'text' }],
  ['anthropic_event', 'message', { type: 'start', index: 0, block: { type: 'text', text: 'INJECTED' } }],
  ['anthropic_event', 'message', 'garbage'],
  ['stop_sequence', 'choice', STOP],
  ['stop_sequence', 'choice', 42],
];

describe.each(CASES)('an upstream answer whose %s (on its %s) is %j', (name, at, value) => {
  const injected: Scenario = { at, fields: { [name]: value, ...NOTE } };
  const plain: Scenario = { at, fields: NOTE };

  it('reaches a /v1/chat/completions client without it, its other unknown fields kept', async () => {
    const [got, want] = [await chat(injected), await chat(plain)];
    expect(JSON.stringify(got)).not.toContain(`"${name}"`);
    expect(got.choices).toEqual(want.choices);
    expect(at === 'message' ? got.choices[0].message.x_note : got.choices[0].x_note).toBe('kept');
  });

  it('reaches a streamed /v1/chat/completions client without it, its other unknown fields kept', async () => {
    const [got, want] = [await chatStream(injected), await chatStream(plain)];
    expect(got.text).not.toContain(`"${name}"`);
    expect(got.text).toContain('"x_note":"kept"');
    expect(got.chunks.map((k) => k.choices)).toEqual(want.chunks.map((k) => k.choices));
  });

  it('is the answer without it on /v1/messages, streamed and not', async () => {
    expect(await messages(injected)).toEqual(await messages(plain));
    expect(await messagesStream(injected)).toBe(await messagesStream(plain));
  });
});

describe('the answer those are compared with', () => {
  it('is the recorded one: its thinking, then its text, ended naturally', async () => {
    const m = await messages({ at: 'message', fields: NOTE });
    expect(m.content).toEqual([
      { type: 'thinking', thinking: 'The user asks 2+2. That is 4.', signature: '' },
      { type: 'text', text: '2 + 2 = 4.' },
    ]);
    expect([m.stop_reason, m.stop_sequence]).toEqual(['end_turn', null]);
    const s = await messagesStream({ at: 'choice', fields: NOTE });
    expect(s).toContain('"stop_reason":"end_turn","stop_sequence":null');
    expect(s).not.toContain('event: error');
  });
});

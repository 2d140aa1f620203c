import { OpenRouter } from '@openrouter/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  anthropicChannel,
  type ChatGateway,
  fixture,
  fixtureJson,
  geminiChannel,
  lastText,
  model,
  ONE_ATTEMPT,
  openaiChannel,
  rawStream,
  recordedAnswer,
  sseSteps,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';
import { anthropicClient, openaiClient } from './sdk-clients.js';

/**
 * Why an answer stopped, as each wire tells it: OpenRouter's `native_finish_reason` (the
 * upstream's raw value) on /v1/chat/completions, and Anthropic's exact `stop_reason` with the
 * matched `stop_sequence` on /v1/messages. Fake upstreams replay each provider's wire format:
 * Anthropic, Gemini, OpenAI, OpenRouter (its own `native_finish_reason`) and vLLM (a string
 * `stop_reason` naming the matched stop sequence). The last user text picks the scenario.
 */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  const anthropic = (req: any) => {
    const s = lastText(req.json);
    const stream = req.json.stream === true;
    if (s === 'count') return recordedAnswer('anthropic/stop-sequence', stream);
    if (s === 'window') {
      if (stream) {
        const sse = fixture('anthropic/chat-stream.sse').replace(
          '"stop_reason": "end_turn"',
          '"stop_reason": "model_context_window_exceeded"',
        );
        return { sse: sseSteps(sse) };
      }
      return {
        json: { ...fixtureJson('anthropic/chat.json'), stop_reason: 'model_context_window_exceeded' },
      };
    }
    return recordedAnswer('anthropic/chat', stream);
  };
  const gemini = (stream: boolean) => (req: any) => {
    const finish = lastText(req.json) === 'long' ? 'MAX_TOKENS' : 'STOP';
    if (stream)
      return { sse: sseSteps(fixture('gemini/chat-stream.sse').replace('"STOP"', JSON.stringify(finish))) };
    const body = fixtureJson('gemini/chat.json');
    body.candidates[0].finishReason = finish;
    return { json: body };
  };
  const openai = (req: any) => {
    const s = lastText(req.json);
    const stream = req.json.stream === true;
    // Servers' own finish reasons: text-generation-inference's `eos_token` and `stop_sequence`,
    // Mistral's `model_length`, an Anthropic-style proxy's `end_turn`, `max_tokens` and `tool_use`.
    const own = /^own:(.+)$/.exec(s)?.[1];
    if (own) {
      if (stream)
        return {
          sse: sseSteps(
            fixture('openai/chat-stream.sse').replace('"finish_reason":"stop"', `"finish_reason":"${own}"`),
          ),
        };
      const body = fixtureJson('openai/chat.json');
      body.choices[0].finish_reason = own;
      return { json: body };
    }
    const name =
      s === 'openrouter' ? 'openrouter-stop-sequence' : s === 'vllm' ? 'vllm-stop-sequence' : 'chat';
    return stream
      ? { sse: sseSteps(fixture(`openai/${name}-stream.sse`)) }
      : { json: fixtureJson(`openai/${name}.json`) };
  };
  up = await startFakeUpstream({
    'POST /v1/messages': anthropic,
    'POST /v1/chat/completions': openai,
    'POST /v1beta/models/gemini-2.5-flash:generateContent': gemini(false),
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': gemini(true),
  });
  c = await startChatGateway({
    channels: [
      anthropicChannel('claude', up, { 'acme/claude': 'claude-sonnet-4-5' }),
      geminiChannel('google', up, { 'acme/gem': 'gemini-2.5-flash' }),
      openaiChannel('oa', up, ['acme/gpt']),
    ],
    models: [model('acme/claude'), model('acme/gem'), model('acme/gpt')],
    gateway: ONE_ATTEMPT,
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

/** [model, last user text, finish_reason, native_finish_reason] */
const CASES: Array<[string, string, string, string]> = [
  ['acme/claude', 'hello', 'stop', 'end_turn'],
  ['acme/claude', 'count', 'stop', 'stop_sequence'],
  ['acme/claude', 'window', 'length', 'model_context_window_exceeded'],
  ['acme/gem', 'hello', 'stop', 'STOP'],
  ['acme/gem', 'long', 'length', 'MAX_TOKENS'],
  ['acme/gpt', 'hello', 'stop', 'stop'],
  ['acme/gpt', 'openrouter', 'stop', 'stop_sequence'],
  ['acme/gpt', 'vllm', 'stop', 'stop'],
  ['acme/gpt', 'own:eos_token', 'stop', 'eos_token'],
  ['acme/gpt', 'own:stop_sequence', 'stop', 'stop_sequence'],
  ['acme/gpt', 'own:end_turn', 'stop', 'end_turn'],
  ['acme/gpt', 'own:model_length', 'length', 'model_length'],
  ['acme/gpt', 'own:max_tokens', 'length', 'max_tokens'],
  ['acme/gpt', 'own:tool_use', 'tool_calls', 'tool_use'],
];

describe('/v1/chat/completions: native_finish_reason', () => {
  it.each(CASES)('%s "%s": %s, native %s, streamed and not', async (id, text, finish, native) => {
    const body = { model: id, messages: userMsg(text), stop: ['END', 'STOP'] };
    const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
    expect(r.status).toBe(200);
    const choice = r.body.choices[0];
    expect(choice.finish_reason).toBe(finish);
    expect(choice.native_finish_reason).toBe(native);
    // The matched stop sequence is for /v1/messages only: OpenRouter sends no such field.
    expect(choice).not.toHaveProperty('stop_sequence');

    const s = await rawStream(c, body);
    expect(s.res.status).toBe(200);
    const choices = s.chunks.flatMap((ch) => ch.choices);
    expect(choices.length).toBeGreaterThan(1);
    for (const ch of choices) {
      expect(ch).toHaveProperty('native_finish_reason');
      expect(ch).not.toHaveProperty('stop_sequence');
    }
    const finishing = choices.filter((ch) => ch.finish_reason !== null);
    expect(finishing.map((ch) => [ch.finish_reason, ch.native_finish_reason])).toEqual([[finish, native]]);
    expect(
      choices.filter((ch) => ch.finish_reason === null).every((ch) => ch.native_finish_reason === null),
    ).toBe(true);
  });

  it("passes the upstream's other choice fields on as before (vLLM's stop_reason)", async () => {
    const body = { model: 'acme/gpt', messages: userMsg('vllm'), stop: ['END'] };
    const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
    expect(r.body.choices[0]).toMatchObject({
      finish_reason: 'stop',
      native_finish_reason: 'stop',
      stop_reason: 'END',
    });
  });

  const oa = () => openaiClient(c);
  const or = () =>
    new OpenRouter({ apiKey: c.key, serverURL: `${c.gw.url}/api/v1`, retryConfig: { strategy: 'none' } });

  it.each(['acme/claude', 'acme/gem', 'acme/gpt'])(
    '%s: the openai SDK keeps it; the strict @openrouter/sdk accepts every chunk',
    async (id) => {
      const messages = userMsg(id === 'acme/gpt' ? 'openrouter' : 'count');
      const native = { 'acme/claude': 'stop_sequence', 'acme/gem': 'STOP', 'acme/gpt': 'stop_sequence' }[id];
      const r = await oa().chat.completions.create({ model: id, messages, stop: ['END'] });
      expect((r.choices[0] as any).native_finish_reason).toBe(native);
      const natives: unknown[] = [];
      for await (const ch of await oa().chat.completions.create({ model: id, messages, stream: true }))
        for (const x of ch.choices) natives.push((x as any).native_finish_reason);
      expect(natives.at(-1)).toBe(native);
      expect(natives.slice(0, -1).every((n) => n === null)).toBe(true);

      const sent = (await or().chat.send({ chatRequest: { model: id, messages, stream: false } })) as any;
      expect(sent.choices[0].finishReason).toBe('stop');
      const stream = (await or().chat.send({
        chatRequest: { model: id, messages, stream: true },
      })) as AsyncIterable<any>;
      const finishes: unknown[] = [];
      for await (const ch of stream) for (const x of ch.choices) finishes.push(x.finishReason);
      expect(finishes.filter((f) => f !== null)).toEqual(['stop']);
    },
  );
});

const anthropic = () => anthropicClient(c);

/** The message_delta of a raw /v1/messages stream. */
async function streamedStop(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${c.gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': c.key, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  const events = (await res.text())
    .split('\n\n')
    .filter((e) => e.startsWith('event: message_delta'))
    .map((e) => JSON.parse(e.split('\n')[1]!.slice(6)));
  expect(events).toHaveLength(1);
  return events[0].delta;
}

describe('/v1/messages: stop_reason and stop_sequence', () => {
  /** [model, last user text, stop_sequences, stop_reason, stop_sequence] */
  const STOPS: Array<[string, string, string[], string, string | null]> = [
    // Anthropic says which sequence matched.
    ['acme/claude', 'count', ['END', 'STOP'], 'stop_sequence', 'END'],
    ['acme/claude', 'hello', ['END'], 'end_turn', null],
    ['acme/claude', 'window', [], 'model_context_window_exceeded', null],
    // vLLM says it in `stop_reason`; believed only for a sequence the request asked for.
    ['acme/gpt', 'vllm', ['END', 'STOP'], 'stop_sequence', 'END'],
    ['acme/gpt', 'vllm', ['STOP'], 'end_turn', null],
    // OpenRouter says a sequence matched, not which: the only one asked for, else unknown.
    ['acme/gpt', 'openrouter', ['END'], 'stop_sequence', 'END'],
    ['acme/gpt', 'openrouter', ['END', 'STOP'], 'stop_sequence', null],
    // Gemini and OpenAI do not say whether a sequence matched: a natural end, as far as known.
    ['acme/gem', 'hello', ['END'], 'end_turn', null],
    ['acme/gem', 'long', ['END'], 'max_tokens', null],
    ['acme/gpt', 'hello', ['END'], 'end_turn', null],
  ];

  it.each(STOPS)(
    '%s "%s" stop_sequences %j: %s, %s, streamed and not',
    async (id, text, stops, reason, seq) => {
      const body = { model: id, max_tokens: 100, messages: userMsg(text), stop_sequences: stops };
      const r = await anthropic().messages.create(body);
      expect([r.stop_reason, r.stop_sequence]).toEqual([reason, seq]);
      const fin = await anthropic().messages.stream(body).finalMessage();
      expect([fin.stop_reason, fin.stop_sequence]).toEqual([reason, seq]);
      expect(await streamedStop(body)).toEqual({ stop_reason: reason, stop_sequence: seq });
    },
  );
});

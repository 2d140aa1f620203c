/**
 * Gemini wire details beyond the contract suite, against a loopback fake that checks what the
 * Gemini API checks and answers as it does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, ChatStreamEvent, ToolCall } from '../../src/gateway/chat/types.js';
import { UpstreamError, upstreamToGateway } from '../../src/gateway/errors.js';
import { completeChat, openChatStream } from '../../src/gateway/upstream/call-chat.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { geminiAdapter } from '../../src/providers/gemini/gemini-adapter.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { collect, deltaChoices } from '../helpers/stream-events.js';
import { fixture } from './contract-cases.js';

const client = new UpstreamClient({
  defaults: { connectTimeoutMs: 2000, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 },
});
let up: FakeUpstream;
beforeAll(async () => {
  up = await startFakeUpstream();
});
afterAll(async () => {
  await client.close();
  await up.close();
});

const invalid = (message: string): FakeAnswer => ({
  status: 400,
  json: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } },
});

/**
 * The thinkingBudget ranges of the Gemini API's thinking docs: 2.5 Pro 128..32768 and never off,
 * 2.5 Flash 0..24576, 2.5 Flash-Lite 0 or 512..24576.
 */
function serveChecking(model: string, min: number, max: number, canDisable: boolean) {
  up.on(`POST /v1beta/models/${model}:generateContent`, (req) => {
    const budget = req.json?.generationConfig?.thinkingConfig?.thinkingBudget;
    if (budget === 0 && !canDisable)
      return invalid('Budget 0 is invalid. This model only works in thinking mode.');
    if (typeof budget === 'number' && budget !== 0 && (budget < min || budget > max))
      return invalid(
        `The thinking budget ${budget} is invalid. Please choose a value between ${min} and ${max}.`,
      );
    return { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } };
  });
}

const target = (model: string) => ({ baseUrl: up.url, apiKey: 'AIza-test', upstreamModel: model });
const q: ChatRequest = { model: 'client-model', messages: [{ role: 'user', content: 'Hi' }] };
const budgetSent = () =>
  up.requests[up.requests.length - 1].json.generationConfig.thinkingConfig.thinkingBudget;

describe('Gemini 2.5 thinking budgets stay in the range each model accepts', () => {
  it('2.5 Pro: reasoning off is its lowest budget (it cannot turn thinking off); small and large budgets are clamped', async () => {
    serveChecking('gemini-2.5-pro', 128, 32_768, false);
    for (const reasoning of [{ effort: 'none' as const }, { enabled: false }, { max_tokens: 0 }]) {
      const r = await completeChat(geminiAdapter, { ...q, reasoning }, target('gemini-2.5-pro'), { client });
      expect(r.choices[0].message.content).toBeTruthy();
      expect(budgetSent()).toBe(128);
    }
    // low effort of 300 tokens is 60; high effort of 64000 is 51200
    await completeChat(
      geminiAdapter,
      { ...q, max_tokens: 300, reasoning: { effort: 'low' } },
      target('gemini-2.5-pro'),
      { client },
    );
    expect(budgetSent()).toBe(128);
    await completeChat(
      geminiAdapter,
      { ...q, max_tokens: 64_000, reasoning: { effort: 'high' } },
      target('gemini-2.5-pro'),
      { client },
    );
    expect(budgetSent()).toBe(32_768);
  });

  it('2.5 Flash-Lite: on is at least 512; off stays 0', async () => {
    serveChecking('gemini-2.5-flash-lite', 512, 24_576, true);
    await completeChat(
      geminiAdapter,
      { ...q, max_tokens: 1000, reasoning: { effort: 'low' } },
      target('gemini-2.5-flash-lite'),
      { client },
    );
    expect(budgetSent()).toBe(512);
    await completeChat(
      geminiAdapter,
      { ...q, reasoning: { effort: 'none' } },
      target('gemini-2.5-flash-lite'),
      {
        client,
      },
    );
    expect(budgetSent()).toBe(0);
  });

  it('2.5 Flash: at most 24576; off stays 0', async () => {
    serveChecking('gemini-2.5-flash', 1, 24_576, true);
    await completeChat(
      geminiAdapter,
      { ...q, max_tokens: 60_000, reasoning: { effort: 'high' } },
      target('gemini-2.5-flash'),
      { client },
    );
    expect(budgetSent()).toBe(24_576);
    await completeChat(geminiAdapter, { ...q, reasoning: { effort: 'none' } }, target('gemini-2.5-flash'), {
      client,
    });
    expect(budgetSent()).toBe(0);
  });
});

describe('Gemini images', () => {
  it('a data URL typed image/jpg (or in capitals) is sent as image/jpeg, which Gemini accepts', async () => {
    // Gemini answers 400 "Unsupported MIME type: image/jpg" for a type outside its list.
    const accepted = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']);
    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', (req) => {
      for (const c of req.json.contents)
        for (const p of c.parts)
          if (p.inlineData && !accepted.has(p.inlineData.mimeType))
            return invalid(`Unsupported MIME type: ${p.inlineData.mimeType}`);
      return { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const req: ChatRequest = {
      ...q,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/4AAQSkZJRg==' } },
            { type: 'image_url', image_url: { url: 'data:Image/PNG;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    };
    const r = await completeChat(geminiAdapter, req, target('gemini-2.5-flash'), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    const parts = up.requests[up.requests.length - 1].json.contents[0].parts;
    expect(parts[1]).toEqual({ inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } });
    expect(parts[2].inlineData.mimeType).toBe('image/png');
  });
});

describe('Gemini 3 thought signatures', () => {
  // Gemini 3's check: in the current turn, each step's first functionCall part carries a signature.
  const serveSignatureCheck = (model: string) =>
    up.on(`POST /v1beta/models/${model}:generateContent`, (req) => {
      const contents = req.json.contents as Array<{ role: string; parts: any[] }>;
      let start = 0;
      contents.forEach((c, i) => {
        if (c.role === 'user' && c.parts.some((p) => !p.functionResponse)) start = i + 1;
      });
      for (const [i, c] of contents.entries()) {
        if (i < start || c.role !== 'model') continue;
        const at = c.parts.findIndex((p) => p.functionCall);
        if (at !== -1 && !c.parts[at].thoughtSignature)
          return invalid(
            `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${c.parts[at].functionCall.name}\` , position ${at + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
          );
      }
      return { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
  const tools: ChatRequest['tools'] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
  ];
  const call = (id: string, city: string) => ({
    id,
    type: 'function' as const,
    function: { name: 'get_weather', arguments: JSON.stringify({ city }) },
  });
  const sentContents = () => up.requests[up.requests.length - 1].json.contents;

  it('a tool loop sent back without reasoning_details gets the documented dummy signature on each step of the current turn', async () => {
    serveSignatureCheck('gemini-3-pro-preview');
    const req: ChatRequest = {
      ...q,
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [call('c0', 'Paris')] },
        { role: 'tool', tool_call_id: 'c0', content: '18C' },
        { role: 'assistant', content: 'Paris: 18C.' },
        { role: 'user', content: 'Rome and Oslo?' },
        { role: 'assistant', content: null, tool_calls: [call('c1', 'Rome'), call('c2', 'Oslo')] },
        { role: 'tool', tool_call_id: 'c1', content: '24C' },
        { role: 'tool', tool_call_id: 'c2', content: '3C' },
        { role: 'assistant', content: 'Checking again.', tool_calls: [call('c3', 'Rome')] },
        { role: 'tool', tool_call_id: 'c3', content: '25C' },
      ],
    };
    const r = await completeChat(geminiAdapter, req, target('gemini-3-pro-preview'), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    const contents = sentContents();
    // Earlier turns are not checked and stay as they were.
    expect(contents[1].parts[0].thoughtSignature).toBeUndefined();
    // Current turn: the first call of each step, not its parallel siblings.
    expect(contents[5].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
    expect(contents[5].parts[1].thoughtSignature).toBeUndefined();
    expect(contents[7].parts[0]).toEqual({ text: 'Checking again.' });
    expect(contents[7].parts[1].thoughtSignature).toBe('skip_thought_signature_validator');
  });

  it('a real signature sent back is kept; Gemini 2.5 gets no dummy', async () => {
    serveSignatureCheck('gemini-3-pro-preview');
    const details = [
      { type: 'reasoning.encrypted' as const, data: 'CiQB0e2Kb4QO', id: 'c1', format: 'google-gemini-v1' },
    ];
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'Weather in Rome?' },
      { role: 'assistant', content: null, tool_calls: [call('c1', 'Rome')], reasoning_details: details },
      { role: 'tool', tool_call_id: 'c1', content: '24C' },
    ];
    await completeChat(geminiAdapter, { ...q, tools, messages }, target('gemini-3-pro-preview'), { client });
    expect(sentContents()[1].parts[0].thoughtSignature).toBe('CiQB0e2Kb4QO');

    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', {
      body: fixture('gemini', 'chat.json'),
      headers: { 'content-type': 'application/json' },
    });
    const noSig = messages.map((m) => (m.role === 'assistant' ? { ...m, reasoning_details: undefined } : m));
    await completeChat(geminiAdapter, { ...q, tools, messages: noSig }, target('gemini-2.5-flash'), {
      client,
    });
    expect(sentContents()[1].parts[0].thoughtSignature).toBeUndefined();
  });
});

describe('Gemini 3 thinking levels', () => {
  // Levels each model takes (Gemini 3 docs): 3 Pro low/high, 3.1 Pro low/medium/high, Flash all four.
  const serveLevels = (model: string, levels: string[]) =>
    up.on(`POST /v1beta/models/${model}:generateContent`, (req) => {
      const level = req.json.generationConfig?.thinkingConfig?.thinkingLevel;
      if (typeof level === 'string' && !levels.includes(level.toLowerCase()))
        return invalid(
          `Thinking level ${level.toUpperCase()} is not supported for this model. Please retry with other thinking level.`,
        );
      return { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
  const levelSent = () =>
    up.requests[up.requests.length - 1].json.generationConfig.thinkingConfig.thinkingLevel;
  const run = async (model: string, reasoning: ChatRequest['reasoning']) => {
    const r = await completeChat(geminiAdapter, { ...q, reasoning }, target(model), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    return levelSent();
  };

  it('Gemini 3 Pro: reasoning on (medium) and minimal map to the levels it takes', async () => {
    serveLevels('gemini-3-pro-preview', ['low', 'high']);
    expect(await run('gemini-3-pro-preview', { enabled: true })).toBe('high');
    expect(await run('gemini-3-pro-preview', { effort: 'medium' })).toBe('high');
    expect(await run('gemini-3-pro-preview', { effort: 'minimal' })).toBe('low');
    expect(await run('gemini-3-pro-preview', { effort: 'low' })).toBe('low');
  });

  it('Gemini 3.1 Pro keeps medium; Flash keeps minimal', async () => {
    serveLevels('gemini-3.1-pro-preview', ['low', 'medium', 'high']);
    expect(await run('gemini-3.1-pro-preview', { effort: 'medium' })).toBe('medium');
    expect(await run('gemini-3.1-pro-preview', { effort: 'minimal' })).toBe('low');
    serveLevels('gemini-3-flash-preview', ['minimal', 'low', 'medium', 'high']);
    expect(await run('gemini-3-flash-preview', { effort: 'minimal' })).toBe('minimal');
    expect(await run('gemini-3-flash-preview', { effort: 'medium' })).toBe('medium');
  });
});

describe('Gemini errors', () => {
  it('400 FAILED_PRECONDITION (unsupported location, billing) is the account, not the request: the next candidate is tried', async () => {
    // The 400s Gemini answers when the project or the caller's region cannot use the API.
    const precondition = (message: string): FakeAnswer => ({
      status: 400,
      json: { error: { code: 400, message, status: 'FAILED_PRECONDITION' } },
    });
    for (const message of [
      'User location is not supported for the API use.',
      'Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.',
    ]) {
      for (const stream of [false, true]) {
        up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', precondition(message));
        up.on('POST /v1beta/models/gemini-2.5-flash:streamGenerateContent', precondition(message));
        const call = stream
          ? openChatStream(geminiAdapter, q, target('gemini-2.5-flash'), { client })
          : completeChat(geminiAdapter, q, target('gemini-2.5-flash'), { client });
        const err = await call.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(UpstreamError);
        const e = err as UpstreamError;
        expect(e.kind).not.toBe('bad_request');
        expect(e.fallbackable).toBe(true);
        expect(e.retryable).toBe(false);
        expect(e.upstreamStatus).toBe(400);
        // Every candidate failing so: the gateway's side, not a 400 blaming the client's request.
        const g = upstreamToGateway(e);
        expect(g.status).toBe(502);
        expect(g.message).toContain(message);
      }
    }
  });
});

describe('Gemini 499 CANCELLED', () => {
  it("is the upstream's failure (retried, then a 502), not a 400 blaming the request, streamed or not", async () => {
    // Gemini's api-errors table: 499 CANCELLED, "the request was cancelled by the server". The
    // gateway cancelled nothing (a call it aborts has no answer to read), as for embeddings.
    const cancelled: FakeAnswer = {
      status: 499,
      json: { error: { code: 499, message: 'The operation was cancelled.', status: 'CANCELLED' } },
    };
    for (const stream of [false, true]) {
      up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', cancelled);
      up.on('POST /v1beta/models/gemini-2.5-flash:streamGenerateContent', cancelled);
      const call = stream
        ? openChatStream(geminiAdapter, q, target('gemini-2.5-flash'), { client })
        : completeChat(geminiAdapter, q, target('gemini-2.5-flash'), { client });
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UpstreamError);
      const e = err as UpstreamError;
      expect(e.kind).toBe('server_error');
      expect(e.retryable).toBe(true);
      expect(e.fallbackable).toBe(true);
      expect(e.upstreamStatus).toBe(499);
      const g = upstreamToGateway(e);
      expect(g.status).toBe(502);
      expect(g.message).toContain('The operation was cancelled.');
    }
  });
});

describe('Gemini stop sequences', () => {
  it('an empty `stop: []` is left out (Gemini refuses an empty stopSequences); a non-empty one is sent', async () => {
    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', (req) => {
      const stops = req.json?.generationConfig?.stopSequences;
      if (Array.isArray(stops) && (stops.length < 1 || stops.length > 5))
        return invalid(
          `Unable to submit request because it has a stopSequences value of ${stops.length} but the supported range is from 1 (inclusive) to 6 (exclusive). Update the value and try again.`,
        );
      return { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const sentConfig = () => up.requests[up.requests.length - 1].json.generationConfig;
    const r = await completeChat(geminiAdapter, { ...q, stop: [] }, target('gemini-2.5-flash'), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    expect(sentConfig()).toBeUndefined();
    await completeChat(geminiAdapter, { ...q, stop: [], temperature: 0.2 }, target('gemini-2.5-flash'), {
      client,
    });
    expect(sentConfig()).toEqual({ temperature: 0.2 });
    await completeChat(geminiAdapter, { ...q, stop: ['END'] }, target('gemini-2.5-flash'), { client });
    expect(sentConfig().stopSequences).toEqual(['END']);
    await completeChat(geminiAdapter, { ...q, stop: 'END' }, target('gemini-2.5-flash'), { client });
    expect(sentConfig().stopSequences).toEqual(['END']);
  });

  it('empty strings are not sent as stop sequences; a list of only empty strings is no stop at all', async () => {
    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', {
      body: fixture('gemini', 'chat.json'),
      headers: { 'content-type': 'application/json' },
    });
    const sentConfig = () => up.requests[up.requests.length - 1].json.generationConfig;
    for (const stop of [[''], ['', ''], '']) {
      const r = await completeChat(geminiAdapter, { ...q, stop }, target('gemini-2.5-flash'), { client });
      expect(r.choices[0].message.content).toBeTruthy();
      expect(sentConfig(), JSON.stringify(stop)).toBeUndefined();
    }
    await completeChat(geminiAdapter, { ...q, stop: ['', '\n\n', 'END'] }, target('gemini-2.5-flash'), {
      client,
    });
    // Whitespace is a stop sequence of its own (a blank line), unlike the empty string.
    expect(sentConfig().stopSequences).toEqual(['\n\n', 'END']);
  });
});

describe('Gemini maxOutputTokens within the model output limit', () => {
  it('a max_tokens above the limit (Gemini refuses it) is sent as the limit, when the registry knows it', async () => {
    const LIMIT = 65_536;
    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', (req) => {
      const max = req.json?.generationConfig?.maxOutputTokens;
      if (typeof max === 'number' && (max < 1 || max > LIMIT))
        return invalid(
          `Unable to submit request because it has a maxOutputTokens value of ${max} but the supported range is from 1 (inclusive) to ${LIMIT + 1} (exclusive). Update the value and try again.`,
        );
      return { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const limited = { ...target('gemini-2.5-flash'), maxOutputTokens: LIMIT };
    const sentConfig = () => up.requests[up.requests.length - 1].json.generationConfig;
    for (const [req, max] of [
      [{ ...q, max_tokens: 100_000 }, LIMIT],
      [{ ...q, max_completion_tokens: 200_000, max_tokens: 10 }, LIMIT],
      [{ ...q, max_tokens: LIMIT }, LIMIT],
      [{ ...q, max_tokens: 1000 }, 1000],
    ] as const) {
      const r = await completeChat(geminiAdapter, req, limited, { client });
      expect(r.choices[0].message.content).toBeTruthy();
      expect(sentConfig().maxOutputTokens, JSON.stringify(req)).toBe(max);
    }
    // No max_tokens: none is sent, the limit is not made one.
    await completeChat(geminiAdapter, q, limited, { client });
    expect(sentConfig()).toBeUndefined();
    // The thinking budget comes from the length that is sent: low effort is 0.2 of it.
    await completeChat(
      geminiAdapter,
      { ...q, max_tokens: 1_000_000, reasoning: { effort: 'low' } },
      limited,
      { client },
    );
    expect(sentConfig().maxOutputTokens).toBe(LIMIT);
    expect(sentConfig().thinkingConfig.thinkingBudget).toBe(Math.floor(LIMIT * 0.2));
  });
});

describe('Gemini seed', () => {
  it('a seed outside int32 (Gemini refuses it) is sent as its low 32 bits, the same for the same seed', async () => {
    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', (req) => {
      const seed = req.json?.generationConfig?.seed;
      if (typeof seed === 'number' && (!Number.isInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 31))
        return invalid(`Invalid value at 'generation_config.seed' (TYPE_INT32), ${seed}`);
      return { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const seedSent = () => up.requests[up.requests.length - 1].json.generationConfig.seed;
    for (const [seed, sent] of [
      [0, 0],
      [42, 42],
      [-5, -5],
      [2 ** 31 - 1, 2 ** 31 - 1],
      [-(2 ** 31), -(2 ** 31)],
      [2 ** 31, -(2 ** 31)],
      [2 ** 32, 0],
      [2 ** 32 + 7, 7],
      [-(2 ** 32) - 7, -7],
      [Number.MAX_SAFE_INTEGER, -1],
      [-Number.MAX_SAFE_INTEGER, 1],
      [1_234_567_890_123, 1_912_276_171],
    ] as const) {
      const r = await completeChat(geminiAdapter, { ...q, seed }, target('gemini-2.5-flash'), { client });
      expect(r.choices[0].message.content, String(seed)).toBeTruthy();
      expect(seedSent(), String(seed)).toBe(sent);
    }
  });
});

describe('Gemini system media', () => {
  const serveChat = () =>
    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', {
      body: fixture('gemini', 'chat.json'),
      headers: { 'content-type': 'application/json' },
    });
  const sentBody = () => up.requests[up.requests.length - 1].json;

  it('images, files and audio in system/developer messages lead the first user turn; their text stays in systemInstruction', async () => {
    serveChat();
    const req: ChatRequest = {
      ...q,
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Answer in the style of this chart.' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'developer',
          content: [
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/logo.png' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
        { role: 'user', content: 'Sales for Q3?' },
        { role: 'assistant', content: 'Up 4%.' },
        { role: 'user', content: 'And Q4?' },
      ],
    };
    const r = await completeChat(geminiAdapter, req, target('gemini-2.5-flash'), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    const body = sentBody();
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Answer in the style of this chart.' }] });
    expect(body.contents.map((c: any) => c.role)).toEqual(['user', 'model', 'user']);
    expect(body.contents[0].parts).toEqual([
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/logo.png' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { text: 'Sales for Q3?' },
    ]);
    expect(body.contents[2].parts).toEqual([{ text: 'And Q4?' }]);
  });

  it('a file part holding an image is inline data or a file URI of its image type, as a PDF is', async () => {
    serveChat();
    const req: ChatRequest = {
      ...q,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { filename: 'a.png', file_data: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'file', file: { file_data: 'data:image/jpg;base64,/9j/4AAQ' } },
            { type: 'file', file: { file_data: 'https://example.com/c.webp' } },
            { type: 'file', file: { file_data: 'https://example.com/report' } },
          ],
        },
      ],
    };
    await completeChat(geminiAdapter, req, target('gemini-2.5-flash'), { client });
    expect(sentBody().contents[0].parts).toEqual([
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/c.webp' } },
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/report' } },
    ]);
  });

  it('with no user turn, the media make one; a system message of media alone sends no systemInstruction', async () => {
    serveChat();
    const req: ChatRequest = {
      ...q,
      messages: [
        {
          role: 'system',
          content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
        },
        { role: 'assistant', content: 'The chart shows' },
      ],
    };
    await completeChat(geminiAdapter, req, target('gemini-2.5-flash'), { client });
    const body = sentBody();
    expect(body.systemInstruction).toBeUndefined();
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
      { role: 'model', parts: [{ text: 'The chart shows' }] },
    ]);

    // A first user turn of function responses keeps them first (they answer the calls before).
    await completeChat(
      geminiAdapter,
      {
        ...q,
        messages: [
          req.messages[0],
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'chart', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
        ],
      },
      target('gemini-2.5-flash'),
      { client },
    );
    expect(sentBody().contents[1].parts).toEqual([
      { functionResponse: { id: 'c1', name: 'chart', response: { ok: true } } },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
    ]);
  });
});

describe('Gemini function call ids', () => {
  const tools: ChatRequest['tools'] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
  ];
  /** Gemini's answers of the fixtures, with `functionCall.id` set as Gemini sets it when it gives one. */
  const withIds = (body: any, ids: string[]) => {
    let i = 0;
    for (const c of body.candidates)
      for (const p of c.content.parts) if (p.functionCall) p.functionCall.id = ids[i++];
    return body;
  };
  const sentContents = () => up.requests[up.requests.length - 1].json.contents;
  /** The next turn as a client builds it: the answer's tool calls, then one result per call. */
  const nextTurn = (calls: ToolCall[]): ChatRequest => ({
    ...q,
    tools,
    messages: [
      { role: 'user', content: 'Weather and time in Paris?' },
      { role: 'assistant', content: null, tool_calls: calls },
      ...calls.map((c, i) => ({ role: 'tool' as const, tool_call_id: c.id, content: `{"n":${i}}` })),
    ],
  });

  it("Gemini's ids are the tool call ids, and go back on the functionCall and functionResponse parts", async () => {
    up.on('POST /v1beta/models/gemini-3-flash-preview:generateContent', [
      { json: withIds(JSON.parse(fixture('gemini', 'tools.json')), ['8gkx2r4q']) },
      { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } },
    ]);
    const r = await completeChat(geminiAdapter, { ...q, tools }, target('gemini-3-flash-preview'), {
      client,
    });
    const calls = r.choices[0].message.tool_calls!;
    expect(calls.map((c) => c.id)).toEqual(['8gkx2r4q']);

    await completeChat(geminiAdapter, nextTurn(calls), target('gemini-3-flash-preview'), { client });
    const contents = sentContents();
    expect(contents[1].parts[0].functionCall).toEqual({
      id: '8gkx2r4q',
      name: 'get_weather',
      args: { location: 'Boston, MA' },
    });
    expect(contents[2].parts).toEqual([
      { functionResponse: { id: '8gkx2r4q', name: 'get_weather', response: { n: 0 } } },
    ]);
  });

  it('streamed: each call keeps its own Gemini id, paired with its response', async () => {
    const event = fixture('gemini', 'tools-stream.sse')
      .trim()
      .replace(/^data: /, '');
    up.on('POST /v1beta/models/gemini-3-flash-preview:streamGenerateContent', {
      sse: [`data: ${JSON.stringify(withIds(JSON.parse(event), ['a1', 'b2']))}\r\n\r\n`],
    });
    const events: ChatStreamEvent[] = [];
    for await (const ev of await openChatStream(
      geminiAdapter,
      { ...q, tools },
      target('gemini-3-flash-preview'),
      {
        client,
      },
    ))
      events.push(ev);
    const calls = events.flatMap((e) =>
      e.type === 'delta' ? e.choices.flatMap((c) => c.delta.tool_calls ?? []) : [],
    ) as ToolCall[];
    expect(calls.map((c) => c.id)).toEqual(['a1', 'b2']);

    up.on('POST /v1beta/models/gemini-3-flash-preview:generateContent', {
      body: fixture('gemini', 'chat.json'),
      headers: { 'content-type': 'application/json' },
    });
    await completeChat(geminiAdapter, nextTurn(calls), target('gemini-3-flash-preview'), { client });
    const contents = sentContents();
    expect(contents[1].parts.map((p: any) => p.functionCall.id)).toEqual(['a1', 'b2']);
    expect(contents[2].parts.map((p: any) => [p.functionResponse.id, p.functionResponse.name])).toEqual([
      ['a1', 'get_weather'],
      ['b2', 'get_time'],
    ]);
  });

  it('without an id from Gemini, the one the gateway made is answered but never sent back as an id', async () => {
    up.on('POST /v1beta/models/gemini-2.5-flash:generateContent', [
      { body: fixture('gemini', 'tools.json'), headers: { 'content-type': 'application/json' } },
      { body: fixture('gemini', 'chat.json'), headers: { 'content-type': 'application/json' } },
    ]);
    const r = await completeChat(geminiAdapter, { ...q, tools }, target('gemini-2.5-flash'), { client });
    const calls = r.choices[0].message.tool_calls!;
    expect(calls[0].id).toMatch(/^call_[0-9a-f]{24}$/);
    await completeChat(geminiAdapter, nextTurn(calls), target('gemini-2.5-flash'), { client });
    const contents = sentContents();
    expect(contents[1].parts[0].functionCall).toEqual({
      name: 'get_weather',
      args: { location: 'Boston, MA' },
    });
    expect(contents[2].parts[0].functionResponse).toEqual({ name: 'get_weather', response: { n: 0 } });
  });
});

const serveJson = (model: string, body: string) =>
  up.on(`POST /v1beta/models/${model}:generateContent`, {
    body,
    headers: { 'content-type': 'application/json' },
  });
const serveSse = (model: string, sse: string) =>
  up.on(`POST /v1beta/models/${model}:streamGenerateContent`, { sse: [sse] });
const streamEvents = async (req: ChatRequest = q) =>
  collect(await openChatStream(geminiAdapter, req, target('gemini-2.5-flash'), { client }));

describe('Gemini finish reasons', () => {
  // The candidate's finishReason as Gemini sends it: filtered candidates carry no content.
  const withReason = (text: string, reason: string) => {
    expect(text).toContain('"finishReason":"SAFETY"');
    return text.replace('"finishReason":"SAFETY"', `"finishReason":"${reason}"`);
  };

  it.each(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT'])(
    '%s is content_filter, the native value kept',
    async (reason) => {
      const body = JSON.stringify(JSON.parse(fixture('gemini', 'safety.json')));
      serveJson('gemini-2.5-flash', withReason(body, reason));
      const r = await completeChat(geminiAdapter, q, target('gemini-2.5-flash'), { client });
      expect(r.choices).toEqual([
        {
          index: 0,
          message: { role: 'assistant', content: null },
          finish_reason: 'content_filter',
          native_finish_reason: reason,
          logprobs: null,
        },
      ]);
      expect(r.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 });
    },
  );

  it.each(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT'])(
    'streamed: %s after some text is content_filter on the finishing chunk, then the usage',
    async (reason) => {
      serveSse('gemini-2.5-flash', withReason(fixture('gemini', 'safety-stream.sse'), reason));
      const events = await streamEvents();
      expect(events.some((e) => e.type === 'error')).toBe(false);
      expect(deltaChoices(events)).toEqual([
        {
          index: 0,
          delta: { role: 'assistant', content: 'Here is how to' },
          finish_reason: null,
          native_finish_reason: null,
        },
        { index: 0, delta: {}, finish_reason: 'content_filter', native_finish_reason: reason },
      ]);
      expect(events.at(-1)).toMatchObject({
        type: 'usage',
        usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
      });
    },
  );

  it('MALFORMED_FUNCTION_CALL is stop (no tool call came), the native value kept, streamed and not', async () => {
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    ];
    const body = fixture('gemini', 'malformed-function-call.json');
    serveJson('gemini-2.5-flash', body);
    const r = await completeChat(geminiAdapter, { ...q, tools }, target('gemini-2.5-flash'), { client });
    expect(r.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null },
        finish_reason: 'stop',
        native_finish_reason: 'MALFORMED_FUNCTION_CALL',
        logprobs: null,
      },
    ]);

    serveSse('gemini-2.5-flash', `data: ${JSON.stringify(JSON.parse(body))}\r\n\r\n`);
    const events = await streamEvents({ ...q, tools });
    expect(events.some((e) => e.type === 'error')).toBe(false);
    expect(deltaChoices(events)).toEqual([
      {
        index: 0,
        delta: { role: 'assistant' },
        finish_reason: 'stop',
        native_finish_reason: 'MALFORMED_FUNCTION_CALL',
      },
    ]);
  });
});

describe('Gemini stream chunks without candidates', () => {
  it('a prompt blocked in a stream (promptFeedback.blockReason) is one content_filter error, no delta', async () => {
    serveSse('gemini-2.5-flash', fixture('gemini', 'blocked-stream.sse'));
    const events = await streamEvents();
    expect(events).toHaveLength(1);
    const [ev] = events;
    expect(ev.type).toBe('error');
    const err = ev.type === 'error' ? ev.error : undefined;
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err?.kind).toBe('content_filter');
    expect(err?.message).toBe('prompt blocked (PROHIBITED_CONTENT)');
    // Not another upstream's to try: a client gets a 400 naming the filter.
    expect(err?.fallbackable).toBe(false);
    expect(upstreamToGateway(err!).status).toBe(400);

    // Gemini's own message, when it gives one, is the error's.
    const chunk = JSON.parse(fixture('gemini', 'blocked-stream.sse').trim().slice(6));
    chunk.promptFeedback.blockReasonMessage = 'The prompt was blocked due to prohibited content.';
    serveSse('gemini-2.5-flash', `data: ${JSON.stringify(chunk)}\r\n\r\n`);
    const again = await streamEvents();
    expect(again.map((e) => e.type)).toEqual(['error']);
    expect(again[0].type === 'error' && again[0].error.message).toBe(
      'The prompt was blocked due to prohibited content.',
    );
  });

  it('a last chunk with only usageMetadata (candidates: []) adds no delta; its counts are the usage', async () => {
    serveSse('gemini-2.5-flash', fixture('gemini', 'usage-tail-stream.sse'));
    const events = await streamEvents();
    expect(events.map((e) => e.type)).toEqual(['delta', 'delta', 'usage']);
    expect(deltaChoices(events)).toEqual([
      {
        index: 0,
        delta: { role: 'assistant', content: 'The answer' },
        finish_reason: null,
        native_finish_reason: null,
      },
      { index: 0, delta: { content: ' is 42.' }, finish_reason: 'stop', native_finish_reason: 'STOP' },
    ]);
    // prompt = promptTokenCount 120 + toolUsePromptTokenCount 35; completion = candidates 20 +
    // thoughts 10; the total is Gemini's totalTokenCount (185); the cache hit is cached_tokens.
    expect(events.at(-1)).toEqual({
      type: 'usage',
      usage: {
        prompt_tokens: 155,
        completion_tokens: 30,
        total_tokens: 185,
        prompt_tokens_details: { cached_tokens: 100 },
        completion_tokens_details: { reasoning_tokens: 10 },
      },
    });
  });
});

describe('Gemini usage', () => {
  it('toolUsePromptTokenCount is part of prompt_tokens; cachedContentTokenCount is cached_tokens', async () => {
    const body = JSON.parse(fixture('gemini', 'chat.json'));
    // A grounded answer: 9 prompt (4 of them cached) + 35 tool-use prompt + 12 candidates.
    body.usageMetadata.toolUsePromptTokenCount = 35;
    body.usageMetadata.totalTokenCount = 56;
    serveJson('gemini-2.5-flash', JSON.stringify(body));
    const r = await completeChat(geminiAdapter, q, target('gemini-2.5-flash'), { client });
    expect(r.usage).toEqual({
      prompt_tokens: 44,
      completion_tokens: 12,
      total_tokens: 56,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });
});

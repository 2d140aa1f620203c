/**
 * Gemini wire details beyond the contract suite, against a loopback fake that checks what the
 * Gemini API checks and answers as it does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/gateway/chat/types.js';
import { completeChat } from '../../src/gateway/upstream/call-chat.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { geminiAdapter } from '../../src/providers/gemini/gemini-adapter.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
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

import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../gateway/chat/types.js';
import { buildGeminiRequest } from './gemini-request.js';
import { parseGeminiResponse } from './gemini-response.js';

const build = (r: ChatRequest, model = 'gemini-2.5-flash') =>
  JSON.parse(
    buildGeminiRequest(
      r,
      { baseUrl: 'https://generativelanguage.googleapis.com', apiKey: 'k', upstreamModel: model },
      { stream: false },
    ).body!,
  );

describe('Gemini request', () => {
  it('maps generation params and response_format', () => {
    const params: ChatRequest = {
      messages: [{ role: 'user', content: 'q' }],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 20,
      max_tokens: 300,
      stop: 'END',
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.1,
      logit_bias: { '1': 2 },
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } },
    };
    const b = build(params, 'gemini-2.0-flash');
    expect(b.generationConfig).toEqual({
      temperature: 0.2,
      topP: 0.9,
      topK: 20,
      maxOutputTokens: 300,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: 0.1,
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object' },
    });
    // Gemini 2.5 and later refuse the penalties (400 "Penalty is not enabled for models/...").
    for (const model of ['gemini-2.5-flash', 'gemini-3-pro-preview', 'gemini-exp-1206']) {
      const g = build(params, model).generationConfig;
      expect(g).not.toHaveProperty('presencePenalty');
      expect(g).not.toHaveProperty('frequencyPenalty');
      expect(g.seed).toBe(7);
    }
  });

  it('thinking: level for Gemini 3, budget 0 when off, no thoughts returned when excluded', () => {
    const q = [{ role: 'user' as const, content: 'q' }];
    expect(
      build({ messages: q, reasoning: { effort: 'xhigh' } }, 'gemini-3-pro-preview').generationConfig
        .thinkingConfig,
    ).toEqual({
      includeThoughts: true,
      thinkingLevel: 'high',
    });
    expect(build({ messages: q, reasoning: { max_tokens: 0 } }).generationConfig.thinkingConfig).toEqual({
      thinkingBudget: 0,
    });
    expect(build({ messages: q, reasoning: { effort: 'none' } }).generationConfig.thinkingConfig).toEqual({
      thinkingBudget: 0,
    });
    // Gemini 3 cannot turn thinking off (and thinks at high when told nothing): its lowest level.
    for (const [m, level] of [
      ['gemini-3-flash-preview', 'minimal'],
      ['gemini-3-pro-preview', 'low'],
      ['gemini-3.1-pro-preview', 'low'],
    ])
      for (const reasoning of [{ effort: 'none' }, { max_tokens: 0 }, { enabled: false }] as const)
        expect(
          build({ messages: q, reasoning }, m).generationConfig.thinkingConfig,
          `${m} ${JSON.stringify(reasoning)}`,
        ).toEqual({
          thinkingLevel: level,
        });
    expect(
      build({ messages: q, reasoning: { max_tokens: 512, exclude: true } }).generationConfig.thinkingConfig,
    ).toEqual({
      includeThoughts: false,
      thinkingBudget: 512,
    });
  });
});

describe('Gemini response', () => {
  it('blocked prompts are content_filter errors; safety finishes are content_filter', () => {
    const blocked = JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } });
    expect(() => parseGeminiResponse(200, blocked, {})).toThrow(
      expect.objectContaining({ kind: 'content_filter' }),
    );
    const safety = JSON.stringify({
      candidates: [{ content: { parts: [] }, finishReason: 'SAFETY' }],
      usageMetadata: {},
    });
    expect(parseGeminiResponse(200, safety, {}).choices[0].finish_reason).toBe('content_filter');
  });

  it('counts thinking tokens as completion tokens', () => {
    const body = JSON.stringify({
      candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'MAX_TOKENS' }],
      usageMetadata: {
        promptTokenCount: 10,
        candidatesTokenCount: 5,
        thoughtsTokenCount: 20,
        totalTokenCount: 35,
      },
    });
    const r = parseGeminiResponse(200, body, {});
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 25, total_tokens: 35 });
    expect(r.usage?.completion_tokens_details?.reasoning_tokens).toBe(20);
  });
});

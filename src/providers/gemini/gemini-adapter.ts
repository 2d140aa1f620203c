/**
 * Google Gemini API (AI Studio). `target.baseUrl` is `https://generativelanguage.googleapis.com`
 * (a trailing `/v1beta` is accepted). Request mapping in `gemini-request.ts`, messages in
 * `gemini-contents.ts`, answers in `gemini-response.ts` and `gemini-stream.ts`.
 */
import type { ChatAdapter } from '../types.js';
import { buildGeminiRequest, GEMINI_PARAMS, geminiHeaders, geminiUrl } from './gemini-request.js';
import { classifyGeminiError, parseGeminiResponse } from './gemini-response.js';
import { GeminiStreamDecoder } from './gemini-stream.js';

export const geminiAdapter: ChatAdapter = {
  kind: 'gemini',
  supportedParams: GEMINI_PARAMS,
  buildChatRequest: buildGeminiRequest,
  parseChatResponse: parseGeminiResponse,
  createStreamDecoder: (maxEventBytes) => new GeminiStreamDecoder(maxEventBytes),
  classifyError: classifyGeminiError,
  listModels: {
    request: (target) => ({
      method: 'GET',
      url: geminiUrl(target, 'models?pageSize=1000'),
      headers: geminiHeaders(target, 'application/json'),
    }),
    parse: (body) => {
      const parsed = JSON.parse(body) as {
        models?: Array<{ name?: unknown; supportedGenerationMethods?: string[] }>;
      };
      return (parsed.models ?? [])
        .filter(
          (m) => !m.supportedGenerationMethods || m.supportedGenerationMethods.includes('generateContent'),
        )
        .map((m) => (typeof m.name === 'string' ? m.name.replace(/^models\//, '') : undefined))
        .filter((id): id is string => id !== undefined);
    },
  },
};

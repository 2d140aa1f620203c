/**
 * Google Gemini API (AI Studio). `target.baseUrl` is `https://generativelanguage.googleapis.com`
 * (a trailing `/v1beta` is accepted). Request mapping in `gemini-request.ts`, messages in
 * `gemini-contents.ts`, answers in `gemini-response.ts` and `gemini-stream.ts`.
 */
import { perObject } from '../../gateway/per-object.js';
import { label, listItems, tokenCount } from '../shared/model-listing.js';
import type { ChatAdapter, ListedModel, ParamsTarget } from '../types.js';
import {
  buildGeminiRequest,
  GEMINI_PARAMS,
  geminiHeaders,
  geminiUrl,
  takesPenalties,
  takesThinking,
} from './gemini-request.js';
import { classifyGeminiError, parseGeminiResponse } from './gemini-response.js';
import { GeminiStreamDecoder } from './gemini-stream.js';

/**
 * Reasoning and the penalties only where they are sent: require_parameters routes reasoning to
 * Gemini 2.5 and later, the penalties to 1.x and 2.0. Worked out once per route target.
 */
const geminiParamsFor = perObject((t: ParamsTarget): ReadonlySet<string> => {
  const thinking = takesThinking(t.upstreamModel, t.settings);
  const penalties = takesPenalties(t.upstreamModel, t.settings);
  if (thinking && penalties) return GEMINI_PARAMS;
  return new Set(
    [...GEMINI_PARAMS].filter(
      (p) =>
        (thinking || (p !== 'reasoning' && p !== 'reasoning_effort')) &&
        (penalties || (p !== 'presence_penalty' && p !== 'frequency_penalty')),
    ),
  );
});

export const geminiAdapter: ChatAdapter = {
  kind: 'gemini',
  supportedParams: GEMINI_PARAMS,
  paramsFor: geminiParamsFor,
  buildChatRequest: buildGeminiRequest,
  parseChatResponse: parseGeminiResponse,
  createStreamDecoder: (maxEventBytes) => new GeminiStreamDecoder(maxEventBytes),
  classifyError: classifyGeminiError,
  listModels: {
    // 1000 is the most a page holds; every page asks the same size, as a page token requires.
    request: (target, page) => ({
      method: 'GET',
      url: geminiUrl(
        target,
        page === undefined
          ? 'models?pageSize=1000'
          : `models?pageSize=1000&pageToken=${encodeURIComponent(page)}`,
      ),
      headers: geminiHeaders(target, 'application/json'),
    }),
    // A model that only embeds (`embedContent`) is left out: a Gemini channel has no embeddings
    // adapter, so listing it would show a model no endpoint serves. Gemini's `thinking` flag is
    // not read: `supported_parameters` is a whole list, which a flag alone cannot make.
    parse: (body) => {
      const parsed = JSON.parse(body) as { models?: unknown };
      const out: ListedModel[] = [];
      for (const m of listItems(parsed.models)) {
        const methods = m.supportedGenerationMethods;
        if (typeof m.name !== 'string' || (Array.isArray(methods) && !methods.includes('generateContent')))
          continue;
        out.push({
          name: m.name.replace(/^models\//, ''),
          contextLength: tokenCount(m.inputTokenLimit),
          maxCompletionTokens: tokenCount(m.outputTokenLimit),
          displayName: label(m.displayName),
        });
      }
      return out;
    },
    // Omitted (or empty) on the last page.
    nextPage: (body) => {
      const token = (JSON.parse(body) as { nextPageToken?: unknown }).nextPageToken;
      return typeof token === 'string' && token !== '' ? token : undefined;
    },
  },
};

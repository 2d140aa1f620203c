/**
 * OpenAI Chat Completions and the servers that copy it (vLLM, Ollama `/v1`, llama.cpp, LM Studio,
 * OpenRouter, Groq, ...). `target.baseUrl` includes the version prefix, e.g. `https://api.openai.com/v1`
 * or `http://127.0.0.1:8000/v1`; an empty `apiKey` sends no Authorization header (local servers).
 * Request options in `openai-request.ts`.
 */
import { joinUrl } from '../shared/media.js';
import type { ChatAdapter } from '../types.js';
import { parseOpenAiModelList } from './openai-model-list.js';
import { buildOpenAiRequest } from './openai-request.js';
import { classifyOpenAiError, OpenAiStreamDecoder, parseOpenAiResponse } from './openai-response.js';
import { OPENAI_COMPATIBLE_PARAMS, openAiParamsFor } from './target-facts.js';

export const openAiCompatibleAdapter: ChatAdapter = {
  kind: 'openai-compatible',
  supportedParams: OPENAI_COMPATIBLE_PARAMS,
  paramsFor: openAiParamsFor,
  buildChatRequest: buildOpenAiRequest,
  parseChatResponse: parseOpenAiResponse,
  createStreamDecoder: (maxEventBytes) => new OpenAiStreamDecoder(maxEventBytes),
  classifyError: classifyOpenAiError,
  listModels: {
    request: (target) => ({
      method: 'GET',
      url: joinUrl(target.baseUrl, 'models'),
      headers: {
        accept: 'application/json',
        ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
        ...target.headers,
      },
    }),
    parse: parseOpenAiModelList,
  },
};

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatGateway } from './chat-helpers.js';

/**
 * The official SDKs against a started gateway, with its key and no retries of their own (a test
 * sees each answer as the gateway gave it); `o` adds or overrides options.
 */
export const anthropicClient = (
  c: ChatGateway,
  o: Partial<ConstructorParameters<typeof Anthropic>[0]> = {},
) => new Anthropic({ baseURL: c.gw.url, apiKey: c.key, maxRetries: 0, ...o });
export const openaiClient = (c: ChatGateway, o: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
  new OpenAI({ baseURL: `${c.gw.url}/v1`, apiKey: c.key, maxRetries: 0, ...o });

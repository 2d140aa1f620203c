/**
 * Upstream kinds -> chat adapters. Adding a provider is one folder plus one line here; nothing
 * outside `src/providers/` branches on the kind.
 */
import { anthropicAdapter } from './anthropic/anthropic-adapter.js';
import { geminiAdapter } from './gemini/gemini-adapter.js';
import { openAiCompatibleAdapter } from './openai-compatible/openai-compatible-adapter.js';
import type { ChatAdapter } from './types.js';

export const chatAdapters = {
  'openai-compatible': openAiCompatibleAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
} as const satisfies Record<string, ChatAdapter>;

export type ChatProviderKind = keyof typeof chatAdapters;

export const chatProviderKinds = Object.keys(chatAdapters) as ChatProviderKind[];

export function isChatProviderKind(kind: string): kind is ChatProviderKind {
  return Object.hasOwn(chatAdapters, kind);
}

/** The adapter for a kind; throws for an unknown kind (a configuration error, caught at load). */
export function getChatAdapter(kind: string): ChatAdapter {
  if (!isChatProviderKind(kind)) throw new Error(`unknown upstream kind: ${kind}`);
  return chatAdapters[kind];
}

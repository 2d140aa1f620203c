import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import { model, openaiChannel } from './chat-helpers.js';

/**
 * What the reasoning and thought-signature tests share: Gemini 3's signatures (as Gemini and
 * OpenRouter give them), OpenRouter in front of Gemini 3 as a channel and as a stream, and the
 * weather tool each SDK declares.
 */

/** The `format` of Gemini's details in OpenRouter's `reasoning_details`. */
export const GEMINI_FORMAT = 'google-gemini-v1';
/** Gemini 3's thought signatures: on a text, on the Paris call, on the London call. */
export const SIG_TEXT = 'EsIBAdHtim9vR4uLw+Q2k8sT1nJ6yH3pB0mX/cZ5aVf7gD9eKoN2iU4tWqSr1==';
export const SIG_PARIS = 'CoMCAdHtim8Xq3T+vJ0cQ1uF9m2wLk7sZ/aPq4Rr8n1YbG5eD0hWjK3tUvXy6cN2Mo==';
export const SIG_LONDON = 'CtwBAdHtim8vQ2nL5pR7sK1uY9eW3xZ+bT0mJ4cF6gH8iD2aN/oV5qS7rE1wP==';

/** A model served with tools and reasoning, as the reasoning tests ask for them. */
export const reasoningModel = (id: string) =>
  model(id, { supported_parameters: ['tools', 'reasoning', 'max_tokens'] });

/** OpenRouter as the channel `or` (reasoning as an object), `mapping` giving each model's name there. */
export const openrouterChannel = (up: FakeUpstream, mapping: Record<string, string>) =>
  openaiChannel('or', up, Object.keys(mapping), {
    keys: ['sk-or'],
    model_mapping: mapping,
    settings: { reasoningObject: true },
  });

/** One streamed chunk of OpenRouter in front of Gemini 3 (`gen`: the generation's id and time). */
export const openrouterChunk = (
  delta: object,
  finish: string | null = null,
  gen = { id: 'gen-1764553300-Rt5WqZ8xC2vB7nM4kL0p', created: 1764553300 },
) => ({
  id: gen.id,
  provider: 'Google AI Studio',
  model: 'google/gemini-3-flash-preview',
  object: 'chat.completion.chunk',
  created: gen.created,
  choices: [
    { index: 0, delta, finish_reason: finish, native_finish_reason: finish && 'STOP', logprobs: null },
  ],
});

/** Gemini's events end in CRLF pairs: one write each. */
export const crlfSteps = (text: string) => text.split(/(?<=\r\n\r\n)/).filter((s) => s.trim() !== '');

const WEATHER_SCHEMA = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};
/** The weather tool, as the Anthropic SDK declares it. */
export const WEATHER_TOOL: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: WEATHER_SCHEMA,
};
/** The weather tool, as the OpenAI SDK declares it for /v1/responses. */
export const WEATHER_FUNCTION: OpenAI.Responses.Tool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: WEATHER_SCHEMA,
  strict: false,
};

/**
 * The answer the reasoning-pieces tests stream in pieces: a thought signed by SIG_TEXT, then a
 * call (this id) signed by SIG_PARIS. Its details as OpenRouter gives them whole (not streamed),
 * and wants them back.
 */
export const PIECES_CALL_ID = 'tool_get_weather_Pq7LmN2vXc4R';
export const PIECES_WHOLE = [
  {
    type: 'reasoning.text',
    text: '**Planning** the weather lookup',
    signature: SIG_TEXT,
    format: GEMINI_FORMAT,
    index: 0,
  },
  { type: 'reasoning.encrypted', data: SIG_PARIS, id: PIECES_CALL_ID, format: GEMINI_FORMAT, index: 1 },
];

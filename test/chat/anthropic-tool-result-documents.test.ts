import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { fakeChatOfEachKind } from './chat-helpers.js';
import { anthropicClient } from './sdk-clients.js';

/**
 * A /v1/messages tool_result holding a document (a PDF or a text file a tool read, as Claude
 * Code's Read tool returns one): Anthropic takes text, image and document blocks in a tool
 * result's content. It reaches an Anthropic upstream as sent, and other upstreams as the media
 * of any other tool result (after the function responses for Gemini, in a user message after
 * the tool results for an OpenAI-compatible one).
 */
const t = fakeChatOfEachKind();

const client = () => anthropicClient(t.c);
const sent = () => t.up.requests.at(-1)!.json;

const PDF: Anthropic.DocumentBlockParam = {
  type: 'document',
  source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
};
const TEXT_FILE: Anthropic.DocumentBlockParam = {
  type: 'document',
  source: { type: 'text', media_type: 'text/plain', data: 'line one\nline two' },
};

const readTurn = (content: Anthropic.ToolResultBlockParam['content']): Anthropic.MessageParam[] => [
  { role: 'user', content: 'read the files' },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a.pdf' } }],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
];

describe('a tool_result holding documents', () => {
  it('reaches an Anthropic upstream as sent', async () => {
    const content: Anthropic.ToolResultBlockParam['content'] = [
      { type: 'text', text: 'two files' },
      PDF,
      TEXT_FILE,
    ];
    const r = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 50,
      messages: readTurn(content),
    });
    expect(r.type).toBe('message');
    expect(sent().messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content }]);
  });

  it('a cache breakpoint on a document goes on the tool_result, where Anthropic takes it', async () => {
    const content: Anthropic.ToolResultBlockParam['content'] = [
      { ...PDF, cache_control: { type: 'ephemeral' } },
    ];
    await client().messages.create({ model: 'acme/claude', max_tokens: 50, messages: readTurn(content) });
    expect(sent().messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: [PDF], cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('reaches an OpenAI-compatible upstream as a file part after the tool results', async () => {
    await client().messages.create({ model: 'acme/gpt', max_tokens: 50, messages: readTurn([PDF]) });
    const messages = sent().messages;
    expect(messages[2]).toEqual({
      role: 'tool',
      tool_call_id: 'toolu_1',
      content: '(the attachment of this result: in the next user message)',
    });
    expect(messages[3]).toEqual({
      role: 'user',
      content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0xLjQK' } }],
    });
  });

  it('reaches a Gemini upstream as inline data after the function response', async () => {
    await client().messages.create({ model: 'acme/gem', max_tokens: 50, messages: readTurn([PDF]) });
    expect(sent().contents[2].parts).toEqual([
      { functionResponse: { name: 'Read', response: { result: '' }, id: 'toolu_1' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0xLjQK' } },
    ]);
  });

  it('counts its tokens (count_tokens takes it too)', async () => {
    const r = await client().messages.countTokens({ model: 'acme/claude', messages: readTurn([PDF]) });
    expect(r.input_tokens).toBeGreaterThan(0);
  });
});

/**
 * A plain-text document (`source.type: "text"`) is its text: the prompt estimate (count_tokens,
 * tokens per minute, the quota reservation, and the usage of an upstream that reports none)
 * counts it as it counts a text block, where every document used to count a flat 1,000 tokens
 * whatever it held. A PDF, whose bytes are not text, still counts the flat 1,000.
 */
describe('the prompt estimate of a plain-text document', () => {
  const words = Array.from({ length: 3000 }, (_, i) => `word${i % 97}`).join(' ');
  const count = (content: Anthropic.ContentBlockParam[]) =>
    client()
      .messages.countTokens({ model: 'acme/claude', messages: [{ role: 'user', content }] })
      .then((r) => r.input_tokens);

  it('counts its text, as the same text in a text block', async () => {
    const asText = await count([{ type: 'text', text: words }]);
    const asDocument = await count([
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: words } },
    ]);
    expect(asText).toBeGreaterThan(3000);
    expect(asDocument).toBe(asText);
  });

  it('in a tool result too; a PDF still counts the flat estimate', async () => {
    const small = await count([{ type: 'text', text: 'x' }]);
    const pdf = await count([PDF]);
    expect(pdf - small).toBeGreaterThan(900);
    const inResult = await client().messages.countTokens({
      model: 'acme/claude',
      messages: readTurn([
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: words } },
      ]),
    });
    expect(inResult.input_tokens).toBeGreaterThan(3000);
  });
});

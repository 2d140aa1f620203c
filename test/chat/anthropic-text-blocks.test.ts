import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { fakeChatOfEachKind } from './chat-helpers.js';
import { anthropicClient } from './sdk-clients.js';

/**
 * A /v1/messages history whose assistant turn has several text blocks, sent to an upstream of
 * another format: the blocks are separate passages, so they reach it a line apart, not run
 * together ("Looking.Sunny."); the fragments of a cited answer are joined as written. Several
 * system blocks (as Claude Code sends them) stay separate parts for Gemini, and a tool result's
 * text blocks reach it a line apart.
 */
const t = fakeChatOfEachKind();

const client = () => anthropicClient(t.c);
const sent = () => t.up.requests.at(-1)!.json;

const TWO_BLOCKS: Anthropic.MessageParam[] = [
  { role: 'user', content: 'weather?' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Looking.' },
      { type: 'text', text: 'Sunny.' },
    ],
  },
  { role: 'user', content: 'thanks' },
];

describe("an assistant turn's text blocks sent to another format", () => {
  it('reach an OpenAI-compatible upstream a line apart, as one string', async () => {
    await client().messages.create({ model: 'acme/gpt', max_tokens: 50, messages: TWO_BLOCKS });
    expect(sent().messages[1]).toEqual({ role: 'assistant', content: 'Looking.\nSunny.' });
  });

  it('reach Gemini a line apart', async () => {
    await client().messages.create({ model: 'acme/gem', max_tokens: 50, messages: TWO_BLOCKS });
    expect(sent().contents[1]).toEqual({ role: 'model', parts: [{ text: 'Looking.\nSunny.' }] });
  });

  it('reach Anthropic a line apart too, when the turn goes by its canonical form', async () => {
    await client().messages.create({ model: 'acme/claude', max_tokens: 50, messages: TWO_BLOCKS });
    expect(sent().messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Looking.\nSunny.' }],
    });
  });

  it('add no second line break where one is already at the boundary', async () => {
    await client().messages.create({
      model: 'acme/gpt',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'list' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'One.\n' },
            { type: 'text', text: 'Two.' },
            { type: 'text', text: '\nThree.' },
          ],
        },
        { role: 'user', content: 'ok' },
      ],
    });
    expect(sent().messages[1].content).toBe('One.\nTwo.\nThree.');
  });

  it("join a cited answer's fragments as written", async () => {
    const citation = {
      type: 'web_search_result_location' as const,
      url: 'https://en.wikipedia.org/wiki/Claude_Shannon',
      title: 'Claude Shannon',
      encrypted_index: 'Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm',
      cited_text: 'Claude Elwood Shannon (April 30, 1916 – February 24, 2001)',
    };
    await client().messages.create({
      model: 'acme/gpt',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'When was Shannon born?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Based on the search results, ' },
            { type: 'text', text: 'Claude Shannon was born on April 30, 1916', citations: [citation] },
            { type: 'text', text: '.' },
          ],
        },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(sent().messages[1].content).toBe(
      'Based on the search results, Claude Shannon was born on April 30, 1916.',
    );
  });
});

describe('Gemini: system blocks and tool result blocks', () => {
  it('keeps each system block its own part of systemInstruction', async () => {
    await client().messages.create({
      model: 'acme/gem',
      max_tokens: 50,
      system: [
        { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
        { type: 'text', text: 'You are an interactive CLI tool.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(sent().systemInstruction).toEqual({
      parts: [
        { text: "You are Claude Code, Anthropic's official CLI for Claude." },
        { text: 'You are an interactive CLI tool.' },
      ],
    });
  });

  it("puts a tool result's text blocks a line apart", async () => {
    await client().messages.create({
      model: 'acme/gem',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'read both files' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: 'line one' },
                { type: 'text', text: 'line two' },
              ],
            },
          ],
        },
      ],
      tools: [{ name: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
    });
    const fr = sent().contents[2].parts[0].functionResponse;
    expect(fr).toMatchObject({ name: 'read', response: { result: 'line one\nline two' } });
  });
});

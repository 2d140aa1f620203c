/**
 * Canonical answers -> the Anthropic Messages response, not streamed (reference/providers.md §2.5);
 * streamed, anthropic-stream-encode.ts. The `stop_reason` / `stop_sequence` and `usage` fields are
 * anthropic-stop.ts and anthropic-usage.ts, shared with the stream; errors, anthropic-errors.ts.
 *
 * - An Anthropic answer (`anthropic_content`, hidden) is written with its content as it came: every
 *   block in its place (thinking interleaved with text and tool calls, server tool blocks such as
 *   server_tool_use and web_search_tool_result), signatures unchanged.
 * - A Gemini answer (`content_order`, hidden) has its thinking, text and calls in the order of its
 *   parts (`inUpstreamOrder`).
 * - Any other answer's content: thinking blocks first (from Anthropic-format `reasoning_details`,
 *   signature and redacted data unchanged; else the plain `reasoning` text with an empty signature,
 *   which Anthropic would not accept back and the adapter leaves out on the next turn), then the
 *   text, then one tool_use per tool call (arguments parsed to an object, the id kept). An
 *   OpenAI-format answer gives its reasoning and its content as two fields, so which came first
 *   is not known: the thinking leads, as a reasoning model thinks before it answers. A turn of
 *   thinking and tool calls alone has its thinking put back between the calls by the details'
 *   block indexes (`withThinkingInPlace`).
 * - Another upstream's signed reasoning (Gemini's thought signatures, in `reasoning_details`) rides
 *   in thinking blocks' signatures, for the client to send back (anthropic-signatures.ts): in the
 *   thinking block before the tool_use whose call it signs, else the first one.
 */
import type { AssistantMessage, ChatResult, ChatUsage, ContentPiece } from '../../gateway/chat/types.js';
import { reasoningBlocksAt, withThinkingInPlace } from '../../providers/anthropic/anthropic-messages.js';
import { argumentsObject } from '../../providers/shared/tools.js';
import { detailItems, withCarriedSignatures } from './anthropic-signatures.js';
import { anthropicStop } from './anthropic-stop.js';
import { anthropicUsage } from './anthropic-usage.js';

type Block = Record<string, unknown> & { type: string };

export function encodeAnthropicMessage(
  id: string,
  model: string,
  result: ChatResult,
  usage: ChatUsage | undefined,
  stops: readonly string[] = [],
): string {
  const choice = result.choices[0];
  const m = choice?.message;
  let content: Block[] = [];
  // A Gemini answer: its thinking, text and calls in the order of its parts.
  const ordered = m?.content_order ? inUpstreamOrder(m, m.content_order) : undefined;
  // An Anthropic answer: its content as it came, every block in its place.
  if (m?.anthropic_content) content = m.anthropic_content;
  else if (ordered) content = withCarriedSignatures(ordered, m?.reasoning_details);
  else if (m) {
    const thinking = reasoningBlocksAt(detailItems(m.reasoning_details), true);
    const rest: Block[] = [];
    const text = (m.content ?? '') || (m.refusal ?? '');
    if (text) rest.push({ type: 'text', text });
    for (const call of m.tool_calls ?? [])
      rest.push({
        type: 'tool_use',
        id: call.id,
        name: call.function.name,
        input: argumentsObject(call.function.arguments),
      });
    // Interleaved thinking where the upstream answer had it: the client echoes this turn back.
    if (thinking.blocks.length > 0) content = withThinkingInPlace(thinking.blocks, thinking.at, rest);
    else if (m.reasoning) content = [{ type: 'thinking', thinking: m.reasoning, signature: '' }, ...rest];
    else content = rest;
    // Another upstream's signatures (Gemini's), for the client to send back (anthropic-signatures.ts).
    content = withCarriedSignatures(content, m.reasoning_details);
  }
  return JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    ...anthropicStop(choice, stops),
    usage: anthropicUsage(usage),
  });
}

/**
 * An answer's blocks in the upstream's order (`content_order`, Gemini's): consecutive reasoning
 * pieces one thinking block, consecutive text pieces one text block, each tool call the next of
 * the message's tool calls (with the id the gateway gave it). Thinking only while the message has
 * its reasoning (`reasoning.exclude` removes it), with an empty signature as for any non-Anthropic
 * reasoning. Undefined, so the canonical layout is written, when the pieces do not add up to the
 * message (a refusal, a call without its tool call): the canonical fields are what was billed and
 * logged.
 */
function inUpstreamOrder(m: AssistantMessage, pieces: ContentPiece[]): Block[] | undefined {
  if (m.refusal) return undefined;
  const calls = m.tool_calls ?? [];
  const thinks = m.reasoning != null;
  const out: Block[] = [];
  let last: Block | undefined;
  let call = 0;
  let text = '';
  let reasoning = '';
  for (const p of pieces) {
    if (p.type === 'tool_call') {
      const c = calls[call++];
      if (!c) return undefined;
      last = {
        type: 'tool_use',
        id: c.id,
        name: c.function.name,
        input: argumentsObject(c.function.arguments),
      };
      out.push(last);
    } else if (p.type === 'reasoning') {
      reasoning += p.text;
      if (!thinks) continue;
      if (last?.type === 'thinking') last.thinking = `${last.thinking}${p.text}`;
      else {
        last = { type: 'thinking', thinking: p.text, signature: '' };
        out.push(last);
      }
    } else {
      text += p.text;
      if (last?.type === 'text') last.text = `${last.text}${p.text}`;
      else {
        last = { type: 'text', text: p.text };
        out.push(last);
      }
    }
  }
  if (call !== calls.length || text !== (m.content ?? '') || (thinks && reasoning !== m.reasoning))
    return undefined;
  return out;
}

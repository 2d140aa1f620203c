/**
 * The message history as an OpenAI-compatible upstream takes it: copies only the messages that
 * need a change (reasoning, `developer`, `cache_control`, empty turns, media in tool results,
 * tool call arguments given as objects), and returns the client's array itself when none does.
 */
import type { ChatMessage, ContentPart, TextPart } from '../../gateway/chat/types.js';

/**
 * Copies only the messages that carry fields self-hosted servers (or, for `dropCache`,
 * api.openai.com) reject. An upstream that speaks OpenRouter (`keepReasoning`) keeps the
 * assistant's `reasoning` / `reasoning_details`: OpenRouter asks for them back unchanged to carry
 * reasoning across turns (Anthropic refuses a thinking turn with tool calls whose signed thinking
 * blocks are missing).
 */
export function plainMessages(
  messages: ChatMessage[],
  developerToSystem: boolean,
  keepReasoning: boolean,
  dropCache: boolean,
): ChatMessage[] {
  let out: ChatMessage[] | undefined;
  let empty = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'assistant' && m.content == null && isEmptyTurn(m, keepReasoning)) {
      empty = true;
      continue;
    }
    const dev = developerToSystem && m.role === 'developer';
    const strip = !keepReasoning && (m.reasoning !== undefined || m.reasoning_details !== undefined);
    const uncache = dropCache && carriesCache(m);
    const args = objectArguments(m);
    if (!dev && !strip && !uncache && !args) continue;
    out ??= messages.slice();
    let rest = strip ? withoutReasoning(m) : m;
    if (uncache) rest = withoutCache(rest);
    if (args) rest = withStringArguments(rest);
    out[i] = dev ? { ...rest, role: 'system' } : rest;
  }
  if (empty)
    return (out ?? messages).filter(
      (m) => !(m.role === 'assistant' && m.content == null && isEmptyTurn(m, keepReasoning)),
    );
  return out ?? messages;
}

/**
 * OpenAI's chat API takes text only in a `tool` message (`ChatCompletionToolMessageParam`), so
 * the images and files a tool returned (an Anthropic `tool_result` with an image, a Responses
 * `function_call_output` with `input_image`: a screenshot, a file read) would make the upstream
 * refuse the request. The tool message keeps its text (or says where its media went), and the
 * media follow in one user message after the run of tool messages, as the next turn sees them.
 */
export function toolMediaAsUser(messages: ChatMessage[]): ChatMessage[] {
  let out: ChatMessage[] | undefined;
  let media: ContentPart[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const parts = m.role === 'tool' && Array.isArray(m.content) ? m.content : undefined;
    const moved = parts?.filter((p) => p.type !== 'text');
    if (moved?.length) {
      out ??= messages.slice(0, i);
      const text = parts!.filter((p): p is TextPart => p.type === 'text');
      const note = `(${moved.length === 1 ? 'the attachment' : `${moved.length} attachments`} of this result: in the next user message)`;
      out.push({ ...m, content: text.length ? [...text, { type: 'text', text: note }] : note });
      media.push(...moved);
    } else out?.push(m);
    if (media.length && messages[i + 1]?.role !== 'tool') {
      out!.push({ role: 'user', content: media });
      media = [];
    }
  }
  return out ?? messages;
}

/**
 * Tool call `arguments` given as an object (the body schema takes one, as Anthropic and Gemini
 * need an object anyway): OpenAI-compatible servers, OpenRouter included, require the JSON string
 * OpenAI's type declares (api.openai.com answers 400 "expected a string, but got an object"), so
 * the call goes as the JSON text of the object; one request means the same whichever upstream
 * serves it.
 */
function objectArguments(m: ChatMessage): boolean {
  if (!m.tool_calls) return false;
  for (const t of m.tool_calls) {
    const a = (t as { function?: { arguments?: unknown } }).function?.arguments;
    if (a !== undefined && typeof a !== 'string') return true;
  }
  return false;
}

/** The turn with each call's non-string `arguments` as JSON text (copies: the client's stay). */
function withStringArguments(m: ChatMessage): ChatMessage {
  return {
    ...m,
    tool_calls: m.tool_calls!.map((t) => {
      const f = (t as { function?: { arguments?: unknown } }).function;
      if (!f || f.arguments === undefined || typeof f.arguments === 'string') return t;
      return { ...t, function: { ...t.function, arguments: JSON.stringify(f.arguments) } };
    }),
  };
}

/**
 * An assistant turn with no content (null), no tool calls, no refusal and no reasoning the
 * upstream takes back: what is left of a turn made only of what this upstream has no form for
 * (an Anthropic server tool's blocks, on a fallback from Claude). OpenAI-compatible servers
 * refuse it ("content: expected a string, got null"); it says nothing, so it is left out.
 */
function isEmptyTurn(m: ChatMessage, keepReasoning: boolean): boolean {
  if (m.tool_calls?.length || m.refusal != null) return false;
  return !keepReasoning || (m.reasoning == null && !m.reasoning_details?.length);
}

/**
 * A breakpoint that would be serialized: the Anthropic ingress sets its own as non-enumerable
 * properties (CacheControl in types.ts), which JSON.stringify already leaves out.
 */
const sentCache = (o: object) => Object.prototype.propertyIsEnumerable.call(o, 'cache_control');

function carriesCache(m: ChatMessage): boolean {
  if (sentCache(m)) return true;
  const content = m.content;
  if (!Array.isArray(content)) return false;
  for (const p of content) if (sentCache(p)) return true;
  return false;
}

/** The message without breakpoints, on it or its parts (copies: the client's objects stay as sent). */
function withoutCache(m: ChatMessage): ChatMessage {
  const out = { ...m };
  delete out.cache_control;
  if (Array.isArray(m.content))
    out.content = m.content.map((p) => {
      if (!sentCache(p)) return p;
      const { cache_control: _c, ...part } = p as typeof p & { cache_control?: unknown };
      return part as typeof p;
    });
  return out;
}

function withoutReasoning(m: ChatMessage): ChatMessage {
  const { reasoning: _r, reasoning_details: _d, ...rest } = m;
  return rest;
}

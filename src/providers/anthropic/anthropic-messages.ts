/**
 * OpenAI messages -> Anthropic `system` + `messages`.
 * - system/developer turns (wherever they are) become top-level `system` text blocks. `system`
 *   takes text only, so their images and documents go, in order, at the start of the first user
 *   turn (a user turn of their own at the start when there is none).
 * - Tool call ids must match `^[a-zA-Z0-9_-]+$` at Anthropic; ids other upstreams made (e.g.
 *   `functions.get_weather:0`) are rewritten the same way in `tool_use` and `tool_result`.
 * - `tool` turns become `tool_result` blocks in a user turn; consecutive same-role turns are merged
 *   into one (tool results first, as Anthropic requires after a tool_use turn). A tool turn's
 *   `is_error` becomes the result's `is_error`.
 * - Cache breakpoints: on text parts as sent; on images, files, tool calls and tool results when
 *   the Anthropic ingress carried them (non-enumerable, see CacheControl in types.ts). One on a
 *   part of a `tool` message goes on its tool_result instead (Anthropic refuses it inside).
 * - Assistant `reasoning_details` (from an earlier answer) are replayed as `thinking` /
 *   `redacted_thinking` blocks ahead of the text and tool_use blocks, unmodified and in order;
 *   streamed fragments of one block (same `index`) are joined. A thinking text without signature
 *   cannot be replayed and is left out.
 * - `image_url`: data URL -> base64 source (image/jpg sent as image/jpeg: see parseDataUrl), http(s)
 *   -> url source; a data URL of a type Anthropic does not take (SVG, BMP...) refuses the request
 *   for Anthropic upstreams (`unfitImages`: the gateway already refused non-images); `file` PDFs and text -> `document`, `file` images (an image data URL, or a URL
 *   ending in an image extension) -> `image` (Anthropic refuses an image in a `document`).
 *   `input_audio` and `video_url` have no Anthropic equivalent and are dropped (a turn left with
 *   nothing is not sent: see contentToBlocks), but see the next point for user turns.
 * - An empty user turn (no content, blank text) is not left out: that would make the turn before
 *   it the end of the conversation (a prefill Anthropic continues). The request is refused for
 *   Anthropic upstreams (`unsendableUserTurn`), which refuse an empty message themselves; so is
 *   one holding only parts Anthropic cannot take when it is the last user or tool turn. An
 *   assistant turn with nothing in it is left out: Anthropic takes an empty assistant turn only
 *   at the end, where it means no prefill, as leaving it out does.
 * - An assistant turn that carries its Anthropic blocks (`anthropic_content`, non-enumerable: the
 *   Anthropic ingress sets it on a turn with server tool blocks, `server_tool_use`,
 *   `web_search_tool_result`...) is sent as those blocks, unchanged and in order.
 * - An assistant `refusal` part (a turn replayed from an earlier refusal) becomes a text block:
 *   Anthropic has no refusal block, and the model should see what it answered. So does a
 *   message-level `refusal` (`content: null, refusal: "..."`), after the content (messageRefusal).
 */
import { createHash } from 'node:crypto';
import type { CacheControl, ChatMessage, ContentPart, ReasoningDetail } from '../../gateway/chat/types.js';
import { noConversation, unsendableUserTurn } from '../shared/empty-turn.js';
import {
  ANTHROPIC_IMAGE_TYPES,
  guessMediaType,
  mediaToFirstUserTurn,
  parseDataUrl,
  unfitImages,
} from '../shared/media.js';
import { messageRefusal } from '../shared/refusal.js';
import { argumentsObject, functionCalls } from '../shared/tools.js';

export type AnthropicBlock = Record<string, unknown> & { type: string };
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

export const ANTHROPIC_FORMAT = 'anthropic-claude-v1';

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * A tool call id Anthropic accepts (it answers 400 "tool_use.id: String should match pattern
 * '^[a-zA-Z0-9_-]+$'" otherwise). A valid id is kept; any other has its other characters replaced
 * and a hash of the original appended, so two ids differing only there stay distinct and a
 * tool_use and its tool_result still pair up.
 */
export function anthropicToolId(id: string): string {
  if (TOOL_ID.test(id)) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 12);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}_${hash}`;
}

/** A block with the cache breakpoint its source carried (non-enumerable there: see CacheControl). */
function withCache(b: AnthropicBlock, cache: CacheControl | undefined): AnthropicBlock {
  if (cache) b.cache_control = cache;
  return b;
}

function partToBlock(part: ContentPart): AnthropicBlock | undefined {
  switch (part.type) {
    case 'text': {
      const b: AnthropicBlock = { type: 'text', text: part.text };
      if (part.cache_control) b.cache_control = part.cache_control;
      return b;
    }
    case 'refusal':
      return { type: 'text', text: part.refusal };
    case 'image_url': {
      const data = parseDataUrl(part.image_url.url);
      return withCache(
        data
          ? { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } }
          : { type: 'image', source: { type: 'url', url: part.image_url.url } },
        part.cache_control,
      );
    }
    case 'file': {
      const src = part.file.file_data;
      if (!src) return undefined;
      const data = parseDataUrl(src);
      if (data?.mediaType === 'text/plain') {
        return withCache(
          {
            type: 'document',
            source: {
              type: 'text',
              media_type: 'text/plain',
              data: Buffer.from(data.data, 'base64').toString('utf8'),
            },
          },
          part.cache_control,
        );
      }
      // An image sent as a file (OpenAI `file` part with an image data URL or image URL) is an
      // `image` block: Anthropic's `document` takes PDFs and text only, and refuses an image.
      const mediaType = data ? data.mediaType : guessMediaType(src, 'application/pdf');
      const type = mediaType.startsWith('image/') ? 'image' : 'document';
      return withCache(
        data
          ? { type, source: { type: 'base64', media_type: data.mediaType, data: data.data } }
          : { type, source: { type: 'url', url: src } },
        part.cache_control,
      );
    }
    default:
      return undefined;
  }
}

/**
 * Anthropic refuses a cache breakpoint inside a tool result's content (400 "cache_control may not
 * be specified within `tool_result.content`. Instead, place it directly on `tool_result`"), where
 * OpenRouter clients put it: on a text part of a `tool` message. The breakpoints are taken off the
 * blocks (fresh objects, not the client's) and the last one is returned for the tool_result, which
 * caches the same prefix (the result is one block, ending where its content ends).
 */
function hoistCache(blocks: AnthropicBlock[]): CacheControl | undefined {
  let cache: CacheControl | undefined;
  for (const b of blocks) {
    if (b.cache_control === undefined) continue;
    cache = b.cache_control as CacheControl;
    delete b.cache_control;
  }
  return cache;
}

/**
 * Anthropic refuses text blocks that are empty ("text content blocks must be non-empty") or only
 * whitespace ("... must contain non-whitespace text"); other models' answers often are (a "\n\n"
 * before tool calls), so they are left out. A turn left with no block is not sent, except that
 * an empty user turn is refused (toAnthropicMessages).
 */
const blank = (text: unknown) => typeof text !== 'string' || !/\S/.test(text);

function contentToBlocks(content: ChatMessage['content']): AnthropicBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return blank(content) ? [] : [{ type: 'text', text: content }];
  const out: AnthropicBlock[] = [];
  for (const p of content) {
    const b = partToBlock(p);
    if (b && !(b.type === 'text' && blank(b.text))) out.push(b);
  }
  return out;
}

/** Reasoning details Anthropic can take back: its own, or unlabelled ones. */
export const replayableByAnthropic = (d: ReasoningDetail): boolean =>
  !d.format || d.format === ANTHROPIC_FORMAT || d.format === 'unknown';

/**
 * Joins streamed fragments of one thinking block back into replayable blocks. A thinking block
 * without a signature is dropped (Anthropic refuses it in a request), unless `keepUnsigned`: an
 * answer to an Anthropic client (the /v1/messages ingress) shows another upstream's reasoning so.
 */
export function reasoningToBlocks(
  details: ReasoningDetail[] | undefined,
  keepUnsigned = false,
): AnthropicBlock[] {
  return reasoningBlocksAt(details, keepUnsigned).blocks;
}

/**
 * `reasoningToBlocks`, with each block's index in the answer it came from (the details'
 * `index`, the Anthropic content block index), or undefined where a detail had none.
 */
export function reasoningBlocksAt(
  details: ReasoningDetail[] | undefined,
  keepUnsigned = false,
): { blocks: AnthropicBlock[]; at: Array<number | undefined> } {
  const blocks: AnthropicBlock[] = [];
  const at: Array<number | undefined> = [];
  if (!details) return { blocks, at };
  let open: { text: string; signature: string; index: number | undefined } | undefined;
  const close = () => {
    if (open && (keepUnsigned || open.signature)) {
      blocks.push({ type: 'thinking', thinking: open.text, signature: open.signature });
      at.push(open.index);
    }
    open = undefined;
  };
  for (const d of details) {
    if (!replayableByAnthropic(d)) continue;
    if (d.type === 'reasoning.text') {
      if (open && d.index !== undefined && open.index !== d.index) close();
      open ??= { text: '', signature: '', index: d.index };
      open.text += d.text ?? '';
      if (d.signature) open.signature += d.signature;
    } else if (d.type === 'reasoning.encrypted' && d.data) {
      close();
      blocks.push({ type: 'redacted_thinking', data: d.data });
      at.push(d.index);
    }
  }
  close();
  return { blocks, at };
}

/**
 * An assistant turn's blocks with its thinking back where the answer had it. Anthropic wants a
 * turn with thinking echoed as received: with interleaved thinking an answer can be [thinking,
 * tool_use, thinking, tool_use], and the OpenAI shape keeps the thinking apart from the tool
 * calls, each thinking detail with its block index. A thinking block at index i that had k
 * thinking blocks before it followed i - k other blocks. That count is exact only when every
 * other block of the answer is one of `rest`'s, one for one: tool_use blocks are (each is a tool
 * call), text blocks are not (several are joined into one content string), so the thinking goes
 * back in place only in a turn of thinking and tool calls alone, where interleaving happens
 * between parallel calls. Otherwise (text in the turn, no indexes, indexes out of order or
 * past the blocks there are) the thinking leads the turn, as it always did.
 */
export function withThinkingInPlace(
  thinking: AnthropicBlock[],
  at: Array<number | undefined>,
  rest: AnthropicBlock[],
): AnthropicBlock[] {
  if (thinking.length === 0) return rest;
  let exact = rest.length > 0 && rest.every((b) => b.type === 'tool_use');
  for (let j = 0; exact && j < at.length; j++) {
    const i = at[j];
    // Each block after as many tool_use as preceded it, and never after the last one.
    if (i === undefined || i < j || i - j >= rest.length || (j > 0 && i <= at[j - 1]!)) exact = false;
  }
  if (!exact) return [...thinking, ...rest];
  const out: AnthropicBlock[] = [];
  let used = 0;
  for (let j = 0; j < thinking.length; j++) {
    const before = at[j]! - j;
    while (used < before) out.push(rest[used++]!);
    out.push(thinking[j]!);
  }
  while (used < rest.length) out.push(rest[used++]!);
  return out;
}

const blocksOf = (m: AnthropicMessage) => m.content;
const isToolResult = (b: AnthropicBlock) => b.type === 'tool_result';
const userTurn = (content: AnthropicBlock[]): AnthropicMessage => ({ role: 'user', content });

export function toAnthropicMessages(messages: ChatMessage[]): {
  system: AnthropicBlock[];
  messages: AnthropicMessage[];
} {
  const unfit = unfitImages(messages, ANTHROPIC_IMAGE_TYPES, 'Anthropic');
  if (unfit) throw unfit;
  const system: AnthropicBlock[] = [];
  const systemMedia: AnthropicBlock[] = [];
  const out: AnthropicMessage[] = [];
  const push = (role: 'user' | 'assistant', blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const b of contentToBlocks(m.content)) (b.type === 'text' ? system : systemMedia).push(b);
        break;
      case 'user': {
        // Left out, the turn before it could end the conversation (a prefill Anthropic continues).
        const blocks = contentToBlocks(m.content);
        if (blocks.length === 0) {
          const refused = unsendableUserTurn(messages, i, 'Anthropic', blank);
          if (refused) throw refused;
        }
        push('user', blocks);
        break;
      }
      case 'tool': {
        // Anthropic takes text, images and documents in a tool result (a file a tool read).
        const inner = contentToBlocks(m.content).filter(
          (b) => b.type === 'text' || b.type === 'image' || b.type === 'document',
        );
        const result: AnthropicBlock = {
          type: 'tool_result',
          tool_use_id: anthropicToolId(m.tool_call_id ?? ''),
          content: inner.length > 0 ? inner : '',
        };
        if (m.is_error) result.is_error = true;
        push('user', [withCache(result, m.cache_control ?? hoistCache(inner))]);
        break;
      }
      case 'assistant': {
        // A turn holding server tool blocks, from the Anthropic ingress: as the client sent it.
        if (m.anthropic_content) {
          push(
            'assistant',
            m.anthropic_content.map((b) => ({ ...b })),
          );
          break;
        }
        const thinking = reasoningBlocksAt(m.reasoning_details);
        const blocks = contentToBlocks(m.content);
        const refusal = messageRefusal(m);
        if (refusal) blocks.push({ type: 'text', text: refusal });
        for (const call of functionCalls(m.tool_calls)) {
          blocks.push(
            withCache(
              {
                type: 'tool_use',
                id: anthropicToolId(call.id ?? ''),
                name: call.function.name,
                input: argumentsObject(call.function.arguments),
              },
              call.cache_control,
            ),
          );
        }
        push('assistant', withThinkingInPlace(thinking.blocks, thinking.at, blocks));
        break;
      }
    }
  }
  // `system` takes text blocks only (400 otherwise).
  if (systemMedia.length > 0) mediaToFirstUserTurn(out, systemMedia, blocksOf, isToolResult, userTurn);
  if (out.length === 0) throw noConversation('Anthropic');
  // A final assistant turn is a prefill, and Anthropic refuses one ending in whitespace (400
  // "final assistant content cannot end with trailing whitespace").
  const last = out[out.length - 1];
  const tail = last?.role === 'assistant' ? last.content[last.content.length - 1] : undefined;
  if (tail?.type === 'text' && typeof tail.text === 'string') tail.text = tail.text.trimEnd();
  return { system, messages: out };
}

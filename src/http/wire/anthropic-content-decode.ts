/**
 * The content blocks of an Anthropic Messages request that are not an assistant's (those are
 * anthropic-assistant-decode.ts) -> the canonical chat request's messages and parts.
 *
 * - `system` (string or text blocks) -> a system message's content (`systemContent`).
 * - A user turn (`userTurn`): text (with `cache_control`, as OpenRouter carries it), image
 *   (base64 -> data URL, url), document (base64/url PDF, plain text) -> `file`; tool_result -> a
 *   `tool` message (string, text, image and document content) after the user turn's earlier parts.
 * - What the canonical request has no field for rides as non-enumerable properties that only the
 *   Anthropic adapter reads (`setHidden`, CacheControl in types.ts): tool_result `is_error`, and
 *   `cache_control` on images, documents, tool_result blocks (`hiddenCache`, which the assistant's
 *   tool_use blocks and the tools use too).
 * - A block the gateway cannot translate is a 400 naming it (`unsupported`): the request schema
 *   (anthropic-request-schema.ts) checks only the top-level fields.
 */
import { setHidden } from '../../gateway/chat/hidden.js';
import type { CacheControl, ChatMessage, ContentPart } from '../../gateway/chat/types.js';
import { badRequest } from '../../gateway/errors.js';

type Block = Record<string, any> & { type: string };

function cacheOf(b: Block): CacheControl | undefined {
  const c = b.cache_control;
  return c && typeof c === 'object' ? (c as CacheControl) : undefined;
}

export function systemContent(system: string | Block[]): string | ContentPart[] | undefined {
  if (typeof system === 'string') return system === '' ? undefined : system;
  if (system.length === 0) return undefined;
  return system.map((b, i) => textPart(b, `system.${i}`));
}

export function textPart(b: Block, at: string): ContentPart {
  if (typeof b.text !== 'string') throw badRequest(`${at}.text: must be a string`, `${at}.text`);
  const cache = cacheOf(b);
  return cache ? { type: 'text', text: b.text, cache_control: cache } : { type: 'text', text: b.text };
}

export function hiddenCache<T extends object>(o: T, b: Block): T {
  const cache = cacheOf(b);
  return cache ? setHidden(o, 'cache_control', cache) : o;
}

function mediaPart(b: Block, at: string): ContentPart {
  const src = b.source as Record<string, any> | undefined;
  if (!src || typeof src !== 'object') throw badRequest(`${at}.source: is required`, `${at}.source`);
  if (b.type === 'image') {
    if (src.type === 'base64' && typeof src.data === 'string' && typeof src.media_type === 'string')
      return hiddenCache(
        { type: 'image_url', image_url: { url: `data:${src.media_type};base64,${src.data}` } },
        b,
      );
    if (src.type === 'url' && typeof src.url === 'string')
      return hiddenCache({ type: 'image_url', image_url: { url: src.url } }, b);
    throw badRequest(`${at}.source: only base64 and url image sources are supported`, `${at}.source`);
  }
  const filename = typeof b.title === 'string' ? b.title : undefined;
  let data: string | undefined;
  if (src.type === 'base64' && typeof src.data === 'string' && typeof src.media_type === 'string')
    data = `data:${src.media_type};base64,${src.data}`;
  else if (src.type === 'text' && typeof src.data === 'string')
    data = `data:text/plain;base64,${Buffer.from(src.data, 'utf8').toString('base64')}`;
  else if (src.type === 'url' && typeof src.url === 'string') data = src.url;
  if (data === undefined)
    throw badRequest(
      `${at}.source: only base64, text and url document sources are supported`,
      `${at}.source`,
    );
  return hiddenCache({ type: 'file', file: { ...(filename ? { filename } : {}), file_data: data } }, b);
}

/** A user turn: its tool results as `tool` messages, the other blocks as user messages, in order. */
export function userTurn(content: string | Block[], at: string, out: ChatMessage[]): void {
  // An empty turn stays one, for the upstream to take or refuse (Anthropic and Gemini adapters
  // refuse it): left out, the assistant turn before it would end the conversation, a prefill.
  if (typeof content === 'string' || content.length === 0) {
    out.push({ role: 'user', content: typeof content === 'string' ? content : [] });
    return;
  }
  let parts: ContentPart[] = [];
  const flush = () => {
    if (parts.length > 0) out.push({ role: 'user', content: parts });
    parts = [];
  };
  content.forEach((b, j) => {
    const where = `${at}.${j}`;
    switch (b.type) {
      case 'text':
        parts.push(textPart(b, where));
        break;
      case 'image':
      case 'document':
        parts.push(mediaPart(b, where));
        break;
      case 'tool_result':
        flush();
        out.push(toolResult(b, where));
        break;
      default:
        throw unsupported(b, where);
    }
  });
  flush();
}

function toolResult(b: Block, at: string): ChatMessage {
  if (typeof b.tool_use_id !== 'string')
    throw badRequest(`${at}.tool_use_id: is required`, `${at}.tool_use_id`);
  let content: string | ContentPart[] = '';
  if (typeof b.content === 'string') content = b.content;
  else if (Array.isArray(b.content))
    content = (b.content as Block[]).map((c, k) => {
      if (c?.type === 'text') return textPart(c, `${at}.content.${k}`);
      // Documents too, as Anthropic takes them (a PDF or text file a tool read).
      if (c?.type === 'image' || c?.type === 'document') return mediaPart(c, `${at}.content.${k}`);
      throw unsupported(c, `${at}.content.${k}`);
    });
  // Anthropic refuses any other; sent as an empty result, the tool's output was lost unseen.
  else if (b.content != null)
    throw badRequest(`${at}.content: must be a string or an array of content blocks`, `${at}.content`);
  const m: ChatMessage = { role: 'tool', tool_call_id: b.tool_use_id, content };
  if (b.is_error === true) setHidden(m, 'is_error', true);
  return hiddenCache(m, b);
}

export function unsupported(b: Block | undefined, at: string) {
  const type = typeof b?.type === 'string' ? b.type : typeof b;
  return badRequest(
    `${at}.type: content block type "${type}" is not supported by this gateway`,
    `${at}.type`,
  );
}

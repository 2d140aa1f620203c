/**
 * OpenAI messages -> Gemini `systemInstruction` + `contents`.
 * - assistant -> role `model`; tool results -> `functionResponse` parts in a `user` turn, named by
 *   looking up the `tool_call_id` among earlier assistant tool calls (OpenAI tool messages carry no
 *   function name; Gemini matches responses by name). Non-object results are wrapped as `{result}`,
 *   a failed call's (`is_error`, from the Anthropic ingress) as `{error}`.
 * - Tool call ids go back as `functionCall.id` and `functionResponse.id` (Gemini pairs by id when
 *   present), except the `call_<24 hex>` ids the gateway made for calls Gemini gave no id.
 * - An assistant `refusal` (a part, or message-level `content: null, refusal: "..."`: a turn
 *   replayed from an earlier refusal) is sent as text: Gemini has no refusal part (messageRefusal).
 * - Consecutive turns of one role are merged (Gemini rejects non-alternating turns).
 * - An empty user turn (no content, empty text) is not left out, which would end the conversation
 *   on the turn before it: the request is refused for Gemini upstreams (`unsendableUserTurn`), as
 *   Gemini refuses an empty turn; so is one holding only parts Gemini cannot take (a `file` with
 *   only a `file_id`) when it is the last user or tool turn. An assistant turn with nothing in it
 *   is left out (Gemini refuses it, and it adds nothing).
 * - system/developer turns become `systemInstruction` text; their images, files, audio and video go, in
 *   order, at the start of the first user turn (after its function responses), or in a user turn
 *   of their own at the start (`mediaToFirstUserTurn`, shared with Anthropic).
 * - `image_url` data URLs of a type Gemini does not list (GIF, SVG...) refuse the request for Gemini
 *   upstreams (`unfitImages`).
 * - `image_url`/`file`/`input_audio`/`video_url`: data URLs -> `inlineData`; http(s)/gs URLs ->
 *   `fileData` with a media type guessed from the extension (a video without one, such as a YouTube
 *   link, which Gemini takes as a file URI, is sent as video/mp4).
 * - Thought signatures come back from `reasoning_details` items of format `google-gemini-v1`: the one
 *   whose `id` names a tool call goes on that `functionCall` part, one without id on the first part
 *   (Gemini 3 rejects a function call turn whose signature is missing).
 * - `skipSignatureCheck` (Gemini 3): in the current turn (after the last user message), a step whose
 *   first `functionCall` part has no signature, because the client did not send `reasoning_details`
 *   back, gets Google's documented dummy signature `skip_thought_signature_validator`; without it
 *   Gemini 3 answers 400 "Function call is missing a thought_signature in functionCall parts".
 */
import type { ChatMessage, ContentPart } from '../../gateway/chat/types.js';
import { noConversation, unsendableUserTurn } from '../shared/empty-turn.js';
import {
  GEMINI_IMAGE_TYPES,
  guessMediaType,
  mediaToFirstUserTurn,
  parseDataUrl,
  unfitImages,
} from '../shared/media.js';
import { messageRefusal } from '../shared/refusal.js';
import { argumentsObject, functionCalls } from '../shared/tools.js';

export const GEMINI_FORMAT = 'google-gemini-v1';

export type GeminiPart = Record<string, unknown>;
export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

function media(url: string, fallbackType: string): GeminiPart {
  const data = parseDataUrl(url);
  return data
    ? { inlineData: { mimeType: data.mediaType, data: data.data } }
    : { fileData: { mimeType: guessMediaType(url, fallbackType), fileUri: url } };
}

function partToGemini(p: ContentPart): GeminiPart | undefined {
  switch (p.type) {
    case 'text':
      return p.text ? { text: p.text } : undefined;
    // An assistant turn replayed from an earlier refusal: Gemini has no refusal part.
    case 'refusal':
      return p.refusal ? { text: p.refusal } : undefined;
    case 'image_url':
      return media(p.image_url.url, 'image/jpeg');
    case 'input_audio':
      return { inlineData: { mimeType: `audio/${p.input_audio.format}`, data: p.input_audio.data } };
    case 'file':
      return p.file.file_data ? media(p.file.file_data, 'application/pdf') : undefined;
    case 'video_url':
      return media(p.video_url.url, 'video/mp4');
    default:
      return undefined;
  }
}

/** An empty text, which Gemini refuses as a part (whitespace it takes, and gets). */
const noText = (text: string) => text === '';

function contentParts(content: ChatMessage['content']): GeminiPart[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return content.map(partToGemini).filter((p): p is GeminiPart => p !== undefined);
}

/** A tool result's text: its text parts, a line apart (separate blocks are not run together). */
function textOf(content: ChatMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let out: string | undefined;
  for (const p of content) if (p.type === 'text') out = out === undefined ? p.text : `${out}\n${p.text}`;
  return out ?? '';
}

/** The shape of `newCallId`'s ids. */
const MADE_ID = /^call_[0-9a-f]{24}$/;

/**
 * Whether a tool call id goes back on `functionCall.id` / `functionResponse.id`: Gemini's own ids
 * do (it pairs a response with its call by id when present), ids the gateway made up for calls
 * that came without one do not (Gemini never saw them; those calls are paired by name, as before).
 */
function sendableId(id: string | undefined): id is string {
  return typeof id === 'string' && id !== '' && !MADE_ID.test(id);
}

/** Google's documented stand-in for a thought signature a function call turn lacks. */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Gemini 3 checks signatures in the current turn only: every step after the last user message
 * (not a function response) must carry one on its first function call.
 */
function fillMissingSignatures(contents: GeminiContent[]): void {
  let start = 0;
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c.role === 'user' && c.parts.some((p) => p.functionResponse === undefined)) {
      start = i + 1;
      break;
    }
  }
  for (const c of contents.slice(start)) {
    if (c.role !== 'model') continue;
    const call = c.parts.find((p) => p.functionCall !== undefined);
    if (call && call.thoughtSignature === undefined) call.thoughtSignature = SKIP_SIGNATURE;
  }
}

const partsOf = (c: GeminiContent) => c.parts;
const isFunctionResponse = (p: GeminiPart) => p.functionResponse !== undefined;
const userTurn = (parts: GeminiPart[]): GeminiContent => ({ role: 'user', parts });

export function toGeminiContents(
  messages: ChatMessage[],
  opts: { skipSignatureCheck?: boolean } = {},
): {
  systemInstruction?: { parts: GeminiPart[] };
  contents: GeminiContent[];
} {
  const unfit = unfitImages(messages, GEMINI_IMAGE_TYPES, 'Gemini');
  if (unfit) throw unfit;
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  let systemMedia: GeminiPart[] | undefined;
  const callNames = new Map<string, string>();
  const push = (role: 'user' | 'model', parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    switch (m.role) {
      case 'system':
      case 'developer': {
        if (typeof m.content === 'string') {
          if (m.content) system.push({ text: m.content });
        } else if (m.content != null)
          // Each text block its own part, as sent (Claude Code's system is several blocks), not
          // run together into one ("...for Claude.You are an interactive CLI tool...").
          for (const p of m.content) {
            if (p.type === 'text') {
              if (p.text) system.push({ text: p.text });
              continue;
            }
            const part = partToGemini(p);
            if (!part) continue;
            systemMedia ??= [];
            systemMedia.push(part);
          }
        break;
      }
      case 'user': {
        // Left out, the turn before it could end the conversation (a trailing `model` turn).
        const parts = contentParts(m.content);
        if (parts.length === 0) {
          const refused = unsendableUserTurn(messages, i, 'Gemini', noText);
          if (refused) throw refused;
        }
        push('user', parts);
        break;
      }
      case 'tool': {
        const text = textOf(m.content);
        let value: unknown = text;
        try {
          value = JSON.parse(text);
        } catch {}
        // A failed call (Anthropic's `is_error`) under the `error` key, as Gemini's convention
        // says a function failed; a result under its own keys, or `result`.
        const response: Record<string, unknown> = m.is_error
          ? { error: value }
          : value !== null && typeof value === 'object' && !Array.isArray(value)
            ? (value as Record<string, unknown>)
            : { result: value };
        const callId = m.tool_call_id ?? '';
        const name = callNames.get(callId) ?? m.name ?? 'unknown_function';
        const fr: Record<string, unknown> = { name, response };
        // The id only when its call carried it, so a call and its response pair up alike.
        if (callNames.has(callId) && sendableId(callId)) fr.id = callId;
        // Images and files the tool returned (a screenshot, a file read): a functionResponse
        // holds JSON only, so they follow as parts of the same user turn, after the turn's
        // function responses, which stay together at its head in the order of their calls.
        const media = Array.isArray(m.content)
          ? contentParts(m.content.filter((p) => p.type !== 'text'))
          : [];
        const last = contents[contents.length - 1];
        if (last?.role === 'user' && last.parts[0]?.functionResponse) {
          let at = 0;
          while (at < last.parts.length && last.parts[at]!.functionResponse) at++;
          last.parts.splice(at, 0, { functionResponse: fr });
          last.parts.push(...media);
        } else push('user', [{ functionResponse: fr }, ...media]);
        break;
      }
      case 'assistant': {
        const sigs = (m.reasoning_details ?? []).filter(
          (d) => d.format === GEMINI_FORMAT && d.type === 'reasoning.encrypted' && d.data,
        );
        const parts = contentParts(m.content);
        const refusal = messageRefusal(m);
        if (refusal) parts.push({ text: refusal });
        for (const call of functionCalls(m.tool_calls)) {
          callNames.set(call.id, call.function.name);
          const fc: Record<string, unknown> = {
            name: call.function.name,
            args: argumentsObject(call.function.arguments),
          };
          if (sendableId(call.id)) fc.id = call.id;
          const part: GeminiPart = { functionCall: fc };
          const sig = sigs.find((s) => s.id === call.id);
          if (sig) part.thoughtSignature = sig.data;
          parts.push(part);
        }
        const loose = sigs.find((s) => !s.id);
        if (loose && parts.length > 0 && parts[0].thoughtSignature === undefined)
          parts[0].thoughtSignature = loose.data;
        push('model', parts);
        break;
      }
    }
  }
  // `systemInstruction` is text (`{parts: [{text}]}`): images, files, audio and video sent there would
  // be lost, so they lead the conversation instead, as for Anthropic.
  if (systemMedia) mediaToFirstUserTurn(contents, systemMedia, partsOf, isFunctionResponse, userTurn);
  if (contents.length === 0) throw noConversation('Gemini');
  if (opts.skipSignatureCheck) fillMissingSignatures(contents);
  return { ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}), contents };
}

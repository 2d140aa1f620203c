/**
 * Gemini answers -> canonical: candidates, usage, finish reasons, errors.
 *
 * Usage: completion_tokens = candidatesTokenCount + thoughtsTokenCount (Gemini's candidates count
 * excludes thinking; OpenAI's completion count includes it), reasoning_tokens = thoughts,
 * prompt_tokens = promptTokenCount + toolUsePromptTokenCount, cached_tokens = cachedContentTokenCount.
 * Gemini reports STOP after function calls, so a candidate with a functionCall finishes `tool_calls`;
 * Gemini's own value (STOP, MAX_TOKENS, SAFETY, ...) is the native finish reason. Gemini does not
 * say which stop sequence ended an answer.
 * A functionCall's `id` (optional at Gemini) is the tool call id; a missing one is generated as
 * `call_<24 hex>` (`newCallId`), which is never sent back to Gemini as its id.
 */
import { setHidden } from '../../gateway/chat/hidden.js';
import type {
  AssistantMessage,
  ChatResult,
  ChatUsage,
  ContentPiece,
  FinishReason,
  ReasoningDetail,
  ToolCall,
} from '../../gateway/chat/types.js';
import { UpstreamError } from '../../gateway/errors.js';
import { classifyFailure, excerpt, safeJson } from '../shared/classify-failure.js';
import { parseDurationMs } from '../shared/retry-after.js';
import { newCallId } from '../shared/tools.js';
import type { UpstreamHeaders } from '../types.js';
import { GEMINI_FORMAT } from './gemini-contents.js';

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'LANGUAGE',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason && FILTERED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

export function toChatUsage(u: GeminiUsage): ChatUsage {
  const prompt = (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0);
  const thoughts = u.thoughtsTokenCount ?? 0;
  const completion = (u.candidatesTokenCount ?? 0) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: u.cachedContentTokenCount ?? 0 },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

export function classifyGeminiError(status: number, body: string, headers: UpstreamHeaders): UpstreamError {
  const parsed = safeJson(body) as
    | {
        error?: {
          code?: number;
          message?: string;
          status?: string;
          details?: Array<Record<string, unknown>>;
        };
      }
    | Array<{ error?: unknown }>
    | undefined;
  // Some Google front ends wrap the error in a one-element array.
  const e = (Array.isArray(parsed) ? (parsed[0] as any)?.error : parsed?.error) as
    | { code?: number; message?: string; status?: string; details?: Array<Record<string, unknown>> }
    | undefined;
  const details = e?.details ?? [];
  const reason = details.find((d) => typeof d.reason === 'string')?.reason as string | undefined;
  const retry = details.find((d) => String(d['@type'] ?? '').endsWith('RetryInfo'))?.retryDelay;
  const effective = status >= 200 && status < 300 ? (e?.code ?? 500) : status;
  return classifyFailure(effective, headers, {
    // Google answers 400 INVALID_ARGUMENT for a bad API key; it is an auth failure for routing.
    classifyAs: reason === 'API_KEY_INVALID' ? 401 : undefined,
    codes: [e?.status, reason],
    message: e?.message ?? (body ? excerpt(body) : undefined),
    retryAfterMs: parseDurationMs(retry),
  });
}

/**
 * The `index` of a candidate's `reasoning_details`, over its whole answer (reference/openrouter.md
 * §5.3: a client joins the streamed pieces of one detail by type and index). Gemini streams each
 * chunk's parts afresh, so a part's position says nothing across chunks: a thought's text keeps
 * one index while thought text goes on (over chunks too, as Gemini cuts one thought into several),
 * and each signature, and each thought after anything else (a signature, text, a call), takes the
 * next. The stream decoder keeps one per candidate for the stream; an answer not streamed has one
 * of its own, so it numbers its details as its stream would.
 */
export class DetailNumbering {
  private next = 0;
  /** The index of the thought text being written, until something else comes. */
  private thinking: number | undefined;

  /** The index of a piece of thought text. */
  thought(): number {
    this.thinking ??= this.next++;
    return this.thinking;
  }

  /** The index of a signature, which ends the thought before it. */
  signature(): number {
    this.thinking = undefined;
    return this.next++;
  }

  /** A part that is no thought (text with text in it, a call, ...) ends the thought before it. */
  other(): void {
    this.thinking = undefined;
  }
}

/**
 * Converts the parts of one candidate; shared by the non-stream parser and the stream decoder.
 * Consecutive thought parts are one detail (`DetailNumbering`), as their stream gives them.
 */
export function convertParts(parts: Array<Record<string, any>>, numbering = new DetailNumbering()) {
  let text: string | null = null;
  let reasoning: string | null = null;
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  // forEach, not for...of: parts that are not a list (a string) fail as unreadable, not as letters.
  parts.forEach((p) => {
    let callId: string | undefined;
    if (p.functionCall) {
      numbering.other();
      const id: string =
        typeof p.functionCall.id === 'string' && p.functionCall.id ? p.functionCall.id : newCallId();
      callId = id;
      calls.push({
        id,
        type: 'function',
        function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) },
      });
    } else if (typeof p.text === 'string' && p.thought === true) {
      reasoning = (reasoning ?? '') + p.text;
      const index = numbering.thought();
      const last = details.at(-1);
      if (last?.type === 'reasoning.text' && last.index === index) last.text += p.text;
      else details.push({ type: 'reasoning.text', text: p.text, format: GEMINI_FORMAT, index });
    } else if (typeof p.text === 'string') {
      if (p.text !== '') numbering.other();
      text = (text ?? '') + p.text;
    } else numbering.other();
    if (typeof p.thoughtSignature === 'string') {
      details.push({
        type: 'reasoning.encrypted',
        data: p.thoughtSignature,
        id: callId ?? null,
        format: GEMINI_FORMAT,
        index: numbering.signature(),
      });
    }
  });
  return { text, reasoning, details, calls };
}

export function parseGeminiResponse(status: number, body: string, headers: UpstreamHeaders): ChatResult {
  if (status < 200 || status >= 300) throw classifyGeminiError(status, body, headers);
  const parsed = safeJson(body) as Record<string, any> | undefined;
  if (!parsed || typeof parsed !== 'object') {
    throw new UpstreamError('bad_response', `unparseable Gemini body: ${excerpt(body)}`, {
      upstreamStatus: status,
    });
  }
  if (parsed.error) throw classifyGeminiError(status, body, headers);
  const candidates: Array<Record<string, any>> = parsed.candidates ?? [];
  if (candidates.length === 0) throw promptBlocked(parsed, status);
  return {
    choices: candidates.map((c, i) => {
      const parts = c.content?.parts ?? [];
      const { text, reasoning, details, calls } = convertParts(parts);
      const message: AssistantMessage = { role: 'assistant', content: text };
      if (reasoning !== null) message.reasoning = reasoning;
      if (details.length > 0) message.reasoning_details = details;
      if (calls.length > 0) message.tool_calls = calls;
      // The parts' order, hidden, for the Anthropic ingress to write its blocks in Gemini's
      // order (thinking between text and calls); only when the canonical fields may not hold it.
      if (reasoning !== null || (text !== null && calls.length > 0))
        setHidden(message, 'content_order', contentOrder(parts));
      return {
        index: c.index ?? i,
        message,
        finish_reason: mapFinishReason(c.finishReason, calls.length > 0),
        native_finish_reason: c.finishReason || null,
        logprobs: null,
      };
    }),
    // No usageMetadata: none here, so the gateway counts the prompt and the answer itself.
    usage: parsed.usageMetadata ? toChatUsage(parsed.usageMetadata) : undefined,
  };
}

export function promptBlocked(parsed: Record<string, any>, status?: number): UpstreamError {
  const reason = parsed.promptFeedback?.blockReason;
  if (reason) {
    const msg = parsed.promptFeedback.blockReasonMessage ?? `prompt blocked (${reason})`;
    return new UpstreamError('content_filter', msg, { upstreamStatus: status });
  }
  return new UpstreamError('bad_response', 'Gemini answer has no candidates', { upstreamStatus: status });
}

/** The pieces of a candidate's parts in their order: thought and text parts, and calls. */
function contentOrder(parts: Array<Record<string, any>>): ContentPiece[] {
  const out: ContentPiece[] = [];
  for (const p of parts) {
    if (p.functionCall) out.push({ type: 'tool_call' });
    else if (typeof p.text === 'string' && p.text !== '')
      out.push({ type: p.thought === true ? 'reasoning' : 'text', text: p.text });
  }
  return out;
}

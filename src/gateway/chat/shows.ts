import type { ChatStreamEvent } from './types.js';

/**
 * Whether the client must see this event: a delta with a finish reason, or with anything but
 * its role that is not empty (content, reasoning, a tool call, a refusal, audio, ...), or an
 * Anthropic server tool's block (hidden `anthropic_event`: a web search began, or its results
 * came; an answer forced to search starts so, and a search that takes a while is no silence to
 * time out and run again). Usage alone is only billed; an error is the caller's to handle.
 */
export function shows(ev: ChatStreamEvent): boolean {
  return carries(ev, true);
}

/**
 * Whether this event is the client's first token (the request log's `ttft_ms`): what `shows`
 * says, less a server tool's progress, which tells the client a web search began or what it
 * found, not the answer: an Anthropic server tool's block events (hidden `anthropic_event`) and
 * OpenRouter's `annotations` (url citations of its web search) on a delta with nothing else.
 * An answer that searches first would otherwise report the search's start as its first token.
 */
export function showsToken(ev: ChatStreamEvent): boolean {
  return carries(ev, false);
}

function carries(ev: ChatStreamEvent, progress: boolean): boolean {
  if (ev.type !== 'delta') return false;
  for (const c of ev.choices) {
    if (c.finish_reason !== null && c.finish_reason !== undefined) return true;
    const d = c.delta;
    if (progress && d.anthropic_event !== undefined) return true;
    // `anthropic_event` is not enumerable: `for...in` never sees it.
    for (const k in d) if (k !== 'role' && (progress || k !== 'annotations') && !isEmpty(d[k])) return true;
  }
  return false;
}

function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === '') return true;
  if (typeof v !== 'object') return false;
  return Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
}

/**
 * Whether this event is progress for the idle timeout (docs/routing.md, "Timeouts"): what `shows`
 * says, or usage. Keep-alives are not: SSE comments and Anthropic's `ping` decode to no event at
 * all, and a delta that is empty (`content: ""`, a role again, a chunk with no choices) is none
 * of these; so an upstream that sends nothing but those after its content times out instead of
 * holding the client for as long as they come.
 */
export function progresses(ev: ChatStreamEvent): boolean {
  return ev.type === 'usage' || carries(ev, true);
}

import type { ChatStreamEvent } from '../chat/types.js';
import { UpstreamError } from '../errors.js';
import type { ChatEventStream } from '../upstream/event-stream.js';

/**
 * Reads a stream that just opened until it produced something the client must see (`shows`),
 * and returns every event read so far, in order. What comes before that is held back: Anthropic
 * starts every stream with message_start (a role delta) and pings, OpenAI-style servers with a
 * role chunk of empty content, some with usage. Committing on those made an error, a cut or
 * silence right after the 200 an in-band failure with no fallback; held back, it is a failure
 * like an error status, and the route moves on with nothing written to the client.
 *
 * Throws, after freeing the connection: the upstream's error event; bad_response for a stream
 * that ended with nothing to show; a timeout once `deadline` (epoch ms: the try's first-byte
 * timeout) passed, so the first-byte timeout runs until there is something to show, not only
 * until the response head (pings or keep-alives would otherwise reset the idle timeout for ever).
 * The timer runs from the first read: comment lines (`: OPENROUTER PROCESSING`) decode to no
 * event at all, and a stream of nothing but those, or of silence, must time out the same.
 */
export async function readUntilShown(events: ChatEventStream, deadline: number): Promise<ChatStreamEvent[]> {
  let held: ChatStreamEvent[] | undefined;
  let late = false;
  const timer = setTimeout(
    () => {
      late = true;
      events.cancel(); // resolves the pending next() with null
    },
    Math.max(0, deadline - Date.now()),
  );
  try {
    for (;;) {
      const batch = await events.next();
      if (late) throw new UpstreamError('timeout', 'upstream first byte timeout (nothing to show yet)');
      if (batch === null) throw new UpstreamError('bad_response', 'upstream stream ended without an answer');
      for (const ev of batch) {
        if (ev.type === 'error') throw ev.error;
        if (shows(ev)) return held === undefined ? batch : held.concat(batch);
      }
      // The batch is ours (the stream hands each one over once): extend it rather than copy.
      if (held === undefined) held = batch;
      else for (const ev of batch) held.push(ev);
    }
  } catch (err) {
    events.cancel();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

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

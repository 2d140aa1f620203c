import { shows } from '../chat/shows.js';
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

import type { ChatStreamEvent } from '../../src/gateway/chat/types.js';

/** Every event of an upstream event stream, in order. */
export async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const ev of events) out.push(ev);
  return out;
}

/** The choices of the delta events, in order. */
export const deltaChoices = (events: ChatStreamEvent[]) =>
  events.flatMap((e) => (e.type === 'delta' ? e.choices : []));

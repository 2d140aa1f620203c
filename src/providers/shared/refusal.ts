import type { ChatMessage } from '../../gateway/chat/types.js';

/**
 * The message-level `refusal` of an assistant turn, for upstreams with no refusal field
 * (Anthropic, Gemini), which get it as text. It is OpenAI's shape of a refusal answer replayed
 * (`content: null, refusal: "..."`); without it the model would not see what it answered.
 * Undefined when absent or blank, or when the content already holds the text (a client that
 * copied the refusal into `content` as well), so it is never sent twice. When content and
 * refusal differ, both are sent, the refusal after the content: nothing the client sent is lost.
 */
export function messageRefusal(m: ChatMessage): string | undefined {
  const refusal = m.refusal;
  if (typeof refusal !== 'string' || !/\S/.test(refusal)) return undefined;
  const c = m.content;
  let text = '';
  if (typeof c === 'string') text = c;
  else if (c) for (const p of c) text += p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '';
  return text.includes(refusal.trim()) ? undefined : refusal;
}

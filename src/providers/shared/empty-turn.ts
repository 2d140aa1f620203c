import type { ChatMessage } from '../../gateway/chat/types.js';
import { UnfitCandidate } from '../../gateway/errors.js';

/**
 * The refusal of a user turn that an adapter would send with nothing in it (Anthropic, Gemini).
 * Both providers refuse an empty message, and leaving the turn out, as was done, made the turn
 * before it the end of the conversation: an assistant prefill the model continued, a trailing
 * `model` turn, or no message at all. So the request is not sent to this upstream
 * (`UnfitCandidate` scoped to it: the model's other upstreams, of another kind, may take it),
 * and with no other the client gets this 400 naming the message. `index` is the message's
 * place in the chat request's `messages`.
 *
 * Empty is no content, `""`, `[]`, or text parts with no text (`blank` says what counts as no
 * text for the provider: Anthropic refuses whitespace too). A turn that held only parts the
 * provider cannot take (audio or video at Anthropic, a `file` with only a `file_id`) is left out,
 * as such parts are beside others, unless it is the last user or tool message: then leaving it
 * out would end the conversation on the assistant too, and it is refused, named for those parts.
 * Undefined: the turn is left out.
 */
export function unsendableUserTurn(
  messages: readonly ChatMessage[],
  index: number,
  provider: string,
  blank: (text: string) => boolean,
): UnfitCandidate | undefined {
  const param = `messages.${index}.content`;
  const c = messages[index]!.content;
  const others =
    Array.isArray(c) && c.some((p) => p.type !== 'text' || !blank(p.text))
      ? [...new Set(c.filter((p) => p.type !== 'text').map((p) => p.type))]
      : [];
  if (others.length === 0)
    return new UnfitCandidate(
      `${param}: empty; ${provider} upstreams refuse an empty message`,
      param,
      'upstream',
    );
  for (let j = index + 1; j < messages.length; j++) {
    const role = messages[j]!.role;
    if (role === 'user' || role === 'tool') return undefined;
  }
  return new UnfitCandidate(
    `${param}: holds nothing ${provider} upstreams take (${others.join(', ')} parts are not sent to them)`,
    param,
    'upstream',
  );
}

/**
 * The refusal of a conversation that comes out with no message at all for Anthropic or Gemini: a
 * request of system (or developer) messages only, which OpenAI-compatible servers take, while
 * both providers refuse an empty `messages`/`contents`. Scoped to the upstream, as above.
 */
export function noConversation(provider: string): UnfitCandidate {
  return new UnfitCandidate(
    `messages: no user or assistant message; ${provider} upstreams need one beside the system prompt`,
    'messages',
    'upstream',
  );
}

/**
 * An answer's `stop_reason` and `stop_sequence` on /v1/messages (reference/providers.md §2.5),
 * the same for the whole message and for a stream's message_delta: `stop_sequence` with the
 * matched string when the upstream said which of the request's stop sequences ended the answer;
 * else the native finish reason when it is one of Anthropic's stop reasons (an Anthropic
 * upstream's, directly or through an OpenRouter-like one); else from the finish reason: stop ->
 * end_turn, length -> max_tokens, tool_calls -> tool_use, content_filter -> refusal. An upstream
 * that stopped on a sequence without saying so (Gemini, OpenAI) gives end_turn: the gateway
 * cannot tell.
 */
import type { FinishDetails, FinishReason } from '../../gateway/chat/types.js';

/** Anthropic's stop reasons (reference/providers.md §2.5). */
const ANTHROPIC_STOP_REASONS = new Set([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

/** How a choice finished, as a canonical choice (or its final delta) says it. */
export interface Finish extends FinishDetails {
  finish_reason: FinishReason | null | undefined;
}

/** The request's stop sequences as a list (`stop` may be one string). */
export function stopList(stop: string | string[] | null | undefined): readonly string[] {
  if (typeof stop === 'string') return [stop];
  return stop ?? [];
}

/**
 * An answer's `stop_reason` and `stop_sequence`. The matched sequence is believed only when it is
 * one the request asked for. A native `stop_sequence` without the string (OpenRouter does not
 * pass it on) is that sequence when the request had only one, else null: the stop reason still
 * says a sequence matched, which `end_turn` would hide.
 */
export function anthropicStop(
  f: Finish | undefined,
  stops: readonly string[],
): { stop_reason: string; stop_sequence: string | null } {
  const matched = f?.stop_sequence;
  if (typeof matched === 'string' && stops.includes(matched))
    return { stop_reason: 'stop_sequence', stop_sequence: matched };
  const native = f?.native_finish_reason;
  if (native === 'stop_sequence')
    return { stop_reason: native, stop_sequence: stops.length === 1 ? stops[0]! : null };
  if (typeof native === 'string' && ANTHROPIC_STOP_REASONS.has(native))
    return { stop_reason: native, stop_sequence: null };
  return { stop_reason: anthropicStopReason(f?.finish_reason), stop_sequence: null };
}

export function anthropicStopReason(finish: FinishReason | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

import type { ReasoningDetail } from '../../gateway/chat/types.js';
import { isPlainObject } from '../../gateway/plain-object.js';
import { replayableByAnthropic } from '../../providers/anthropic/anthropic-messages.js';
import { isSigned, isWrappedReasoning, unwrapReasoning, wrapReasoning } from './responses-reasoning.js';

/**
 * Other upstreams' signed reasoning carried through an Anthropic client's thinking blocks
 * (docs/anthropic-ingress.md, "Thought signatures of other upstreams").
 *
 * An upstream other than Anthropic can give reasoning the next turn must hand back unchanged:
 * Gemini's thought signatures (`reasoning_details` of format `google-gemini-v1`: on a functionCall
 * part, with its tool call's `id`, or on a text or thought part, without one), OpenRouter's
 * encrypted reasoning. An Anthropic client has one place for such a thing, a thinking block's
 * `signature`, which it sends back as it got it. So those details ride there, in the form the
 * Responses ingress gives its `encrypted_content` (JSON in base64url behind `mgr1.`,
 * `wrapReasoning`), and the decoder turns them back into the turn's `reasoning_details`, with their
 * format and ids, for the upstream that wrote them (gemini-contents.ts puts each on its part).
 *
 * Anthropic's signatures are base64, which has no `.`: one behind `mgr1.` is never Anthropic's,
 * and is never sent to Anthropic as signed thinking (Anthropic answers 400 to a signature it did
 * not write); such a block is unsigned there, and left out as any other upstream's reasoning is.
 * Anthropic's own details are never wrapped.
 */

/**
 * The items of an answer's `reasoning_details` that are objects, none when it is not a list. The
 * adapters hand on only lists of objects (the OpenAI-compatible one drops anything else from an
 * upstream's answer): this keeps the encoder from a 500 should one ever not, as a string there was.
 */
export const detailItems = (details: unknown): ReasoningDetail[] =>
  Array.isArray(details) ? details.filter((d): d is ReasoningDetail => isPlainObject(d)) : [];

/** Details the gateway carries in a signature: other upstreams' reasoning with opaque data. */
export function carriedDetails(details: readonly ReasoningDetail[] | undefined): ReasoningDetail[] {
  return detailItems(details).filter((d) => !replayableByAnthropic(d) && isSigned(d));
}

/** The signature carrying `details` (`carriedDetails`). */
export const carryingSignature = (details: readonly ReasoningDetail[]): string => wrapReasoning(details);

/** Whether a thinking block's signature is one the gateway wrote (never Anthropic's). */
export const isCarryingSignature = isWrappedReasoning;

/**
 * The details a signature the gateway wrote carries, back for their upstream; undefined for
 * any other signature (Anthropic's, or none). A malformed one carries nothing, and Anthropic's
 * own details are never taken from one: a client cannot pass a signature off as Anthropic's so.
 */
export function detailsOfSignature(signature: unknown): ReasoningDetail[] | undefined {
  if (!isCarryingSignature(signature)) return undefined;
  return (unwrapReasoning(signature) ?? []).filter((d) => !replayableByAnthropic(d));
}

/** A thinking block that has no signature of its own (the gateway wrote it for such reasoning). */
const unsigned = (b: Record<string, unknown> | undefined): boolean => b?.type === 'thinking' && !b.signature;

/**
 * An answer's blocks with the carried details (`carriedDetails` of its `reasoning_details`) in
 * thinking blocks' signatures. A detail with the id of a tool call (Gemini's signature on a
 * functionCall part) goes in the thinking block right before that tool_use (one more empty
 * thinking block when the block before is not one); any other in the first thinking block
 * without a signature (a new empty one at the start when there is none). Where each rides only
 * keeps the blocks readable, as Anthropic's interleaved thinking: the ids inside say where each
 * goes back. The blocks are the encoder's own (fresh objects); the list is a copy.
 */
export function withCarriedSignatures<B extends Record<string, unknown> & { type: string }>(
  blocks: B[],
  details: readonly ReasoningDetail[] | undefined,
): B[] {
  const carried = carriedDetails(details);
  if (carried.length === 0) return blocks;
  const out = blocks.slice();
  const carriers = new Map<B, ReasoningDetail[]>();
  const carry = (b: B, d: ReasoningDetail) => carriers.set(b, [...(carriers.get(b) ?? []), d]);
  const carrierBefore = (at: number): B => {
    const prev = out[at - 1];
    if (prev && unsigned(prev)) return prev;
    const b = { type: 'thinking', thinking: '', signature: '' } as unknown as B;
    out.splice(at, 0, b);
    return b;
  };
  const where = new Map<ReasoningDetail, B>();
  const loose: ReasoningDetail[] = [];
  for (const d of carried) {
    const call = d.id ? out.findIndex((b) => b.type === 'tool_use' && b.id === d.id) : -1;
    if (call < 0) loose.push(d);
    else where.set(d, carrierBefore(call));
  }
  if (loose.length > 0) {
    const first = out.find(unsigned) ?? carrierBefore(0);
    for (const d of loose) where.set(d, first);
  }
  // In the answer's order within each block: the upstream gets them back as it gave them.
  for (const d of carried) carry(where.get(d)!, d);
  for (const [b, list] of carriers) (b as Record<string, unknown>).signature = carryingSignature(list);
  return out;
}

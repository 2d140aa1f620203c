import type { ReasoningDetail } from '../../gateway/chat/types.js';

/**
 * A Responses `reasoning` item's `encrypted_content`, as this gateway writes it: the canonical
 * `reasoning_details` of the answer (Anthropic's thinking with its signature, OpenRouter's
 * encrypted reasoning, Gemini's thought signatures...), as JSON in base64url behind a prefix.
 * The gateway stores nothing, so the client carries them: sent back in `input`, they become the
 * assistant turn's `reasoning_details` again, and the upstream gets its own reasoning back. Not a
 * secret (the details are the upstream's own opaque or signed values), only opaque to the client.
 * The Anthropic ingress carries other upstreams' signed reasoning in thinking blocks' signatures in
 * the same form (anthropic-signatures.ts).
 */
const PREFIX = 'mgr1.';

/** Whether a value is in the form `wrapReasoning` writes (it may still not unwrap). */
export const isWrappedReasoning = (value: unknown): value is string =>
  typeof value === 'string' && value.startsWith(PREFIX);

export function wrapReasoning(details: readonly ReasoningDetail[]): string {
  return PREFIX + Buffer.from(JSON.stringify(details), 'utf8').toString('base64url');
}

/**
 * The details of an `encrypted_content` this gateway wrote; undefined for anything else (one from
 * OpenAI itself or another gateway means nothing to the upstreams here, and is dropped).
 */
export function unwrapReasoning(content: unknown): ReasoningDetail[] | undefined {
  if (!isWrappedReasoning(content)) return undefined;
  try {
    const parsed: unknown = JSON.parse(
      Buffer.from(content.slice(PREFIX.length), 'base64url').toString('utf8'),
    );
    if (!Array.isArray(parsed)) return undefined;
    return parsed.filter(
      (d): d is ReasoningDetail => d !== null && typeof d === 'object' && typeof d.type === 'string',
    );
  } catch {
    return undefined;
  }
}

/** A detail with something the upstream wants back unchanged: a signature, or encrypted data. */
export const isSigned = (d: ReasoningDetail): boolean =>
  (d.type === 'reasoning.encrypted' && !!d.data) || !!d.signature;

/**
 * Streamed `reasoning_details` pieces merged into whole details: pieces of one detail share its
 * type and index (Anthropic's thinking deltas and then its signature; OpenRouter's chunks, whose
 * text comes in pieces and whose signature may come in a later one), their text, summary and data
 * are joined, and the last id and format win. A signed piece (a signature, encrypted data) for a
 * detail already signed begins another detail: the Gemini adapter numbered its details by the
 * part's position in each streamed chunk (conversations from then still hold them), so two thought
 * signatures of one answer could share a type and an index, and joined they would be neither. A
 * piece without an index is a detail of its own: nothing says which one it goes on.
 */
export class ReasoningDetailsMerger {
  private readonly all: ReasoningDetail[] = [];
  /** The latest detail of each type and index. */
  private readonly byKey = new Map<string, ReasoningDetail>();

  add(pieces: readonly ReasoningDetail[] | undefined): void {
    if (!pieces) return;
    for (const p of pieces) this.merge(p);
  }

  /** The detail `piece` would join, when a piece of it came before (not for one without an index). */
  of(piece: ReasoningDetail): ReasoningDetail | undefined {
    return piece.index === undefined ? undefined : this.byKey.get(`${piece.type}:${piece.index}`);
  }

  /** Merges `piece` into its detail (a copy of it when it begins one) and returns that detail. */
  merge(p: ReasoningDetail): ReasoningDetail {
    const d = this.of(p);
    if (!d || (isSigned(d) && isSigned(p))) {
      const whole = { ...p };
      this.all.push(whole);
      if (p.index !== undefined) this.byKey.set(`${p.type}:${p.index}`, whole);
      return whole;
    }
    if (typeof p.text === 'string') d.text = (d.text ?? '') + p.text;
    if (typeof p.summary === 'string') d.summary = (d.summary ?? '') + p.summary;
    if (typeof p.data === 'string') d.data = (d.data ?? '') + p.data;
    if (p.signature) d.signature = p.signature;
    if (p.id) d.id = p.id;
    if (p.format) d.format = p.format;
    return d;
  }

  get details(): ReasoningDetail[] {
    return this.all.slice();
  }
}

/**
 * `details` with `more` after them, the pieces of one detail joined by type and index
 * (`ReasoningDetailsMerger`): the reasoning items of one assistant turn, sent back in `input`. A
 * streamed answer gives each reasoning item the details that came while it was open, so the
 * pieces of one detail can come in two (its text before the answer's text, its signature after).
 */
export function joinDetails(
  details: readonly ReasoningDetail[] | undefined,
  more: readonly ReasoningDetail[],
): ReasoningDetail[] {
  const m = new ReasoningDetailsMerger();
  m.add(details);
  m.add(more);
  return m.details;
}

/**
 * An assistant turn of an Anthropic Messages request -> the canonical assistant message
 * (`assistantTurn`).
 *
 * - text -> the content (one text, `joinTexts`); tool_use -> `tool_calls` (input as JSON text, the
 *   id kept, `cache_control` hidden); thinking / redacted_thinking -> the assistant's
 *   `reasoning_details` (signature and data unchanged, `format` Anthropic's), which the Anthropic
 *   adapter replays as the same blocks. A thinking block whose signature the gateway wrote
 *   (`mgr1.`, carrying another upstream's reasoning: Gemini's thought signatures,
 *   anthropic-signatures.ts) gives back the details it carries, for that upstream, and is never
 *   Anthropic's signed thinking; an empty one between two text blocks does not part them
 *   (`cutsText`). The pieces of one detail that such blocks carry apart (a streamed answer's late
 *   piece) are joined by type and index.
 * - Blocks of server tools (`server_tool_use`, `web_search_tool_result` and the other
 *   `*_tool_result` blocks, `mcp_tool_use`, `container_upload`) have no canonical form: the
 *   turn keeps its canonical fields (its text and tool calls) and rides hidden as sent
 *   (`anthropic_content`), which the Anthropic adapter replays unchanged. So does a turn with
 *   signed thinking interleaved with its text (`inCanonicalOrder`), whose order the canonical
 *   fields cannot hold.
 */
import { setHidden } from '../../gateway/chat/hidden.js';
import type {
  AnthropicNativeBlock,
  ChatMessage,
  ContentPart,
  ReasoningDetail,
  TextPart,
  ToolCall,
} from '../../gateway/chat/types.js';
import { badRequest } from '../../gateway/errors.js';
import { ANTHROPIC_FORMAT } from '../../providers/anthropic/anthropic-messages.js';
import { hiddenCache, textPart, unsupported } from './anthropic-content-decode.js';
import { detailsOfSignature, isCarryingSignature } from './anthropic-signatures.js';
import { ReasoningDetailsMerger } from './responses-reasoning.js';

type Block = Record<string, any> & { type: string };

export function assistantTurn(content: string | Block[], at: string): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: ContentPart[] = [];
  /** Whether each text block carries `citations`: a fragment of one cited passage. */
  let cited: boolean[] | undefined;
  /** Whether each text block goes on from the one before, cut only by a signature's block. */
  let cut: boolean[] | undefined;
  /** What came since the last text block: nothing, only signature blocks (`cutsText`), or more. */
  let since: 'nothing' | 'signatures' | 'more' = 'more';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  let reasoning: string | undefined;
  let native = false;
  /**
   * The carried details, their pieces joined by type and index: a streamed answer puts a piece
   * that came after its detail's signature in a later thinking block (anthropic-stream-encode.ts).
   */
  const foreign = new ReasoningDetailsMerger();
  const joined = new Set<ReasoningDetail>();
  content.forEach((b, j) => {
    if (b.type !== 'text') since = since !== 'more' && cutsText(b) ? 'signatures' : 'more';
    if (isServerToolBlock(b.type)) {
      native = true;
      return;
    }
    switch (b.type) {
      case 'text':
        if (since === 'signatures') {
          cut ??= [];
          cut[texts.length] = true;
        }
        since = 'nothing';
        texts.push(textPart(b, `${at}.${j}`));
        if (Array.isArray(b.citations) && b.citations.length > 0) {
          cited ??= [];
          cited[texts.length - 1] = true;
        }
        break;
      case 'thinking': {
        reasoning = (reasoning ?? '') + (b.thinking ?? '');
        const text = typeof b.thinking === 'string' ? b.thinking : '';
        const carried = detailsOfSignature(b.signature);
        if (carried) {
          // Another upstream's reasoning (anthropic-signatures.ts): back as its details, and the
          // text as that upstream's, unsigned, which Anthropic is never sent as signed thinking,
          // unless a detail carried is that text itself (signed, as OpenRouter gave it): the
          // upstream gets it once, as it wrote it.
          if (!carried.some(holdsText))
            details.push({
              type: 'reasoning.text',
              text,
              format: carried[0]?.format ?? ANTHROPIC_FORMAT,
              index: j,
            });
          for (const d of carried) {
            const whole = foreign.merge(d);
            if (!joined.has(whole)) details.push(whole);
            joined.add(whole);
          }
          break;
        }
        details.push({
          type: 'reasoning.text',
          text,
          signature: typeof b.signature === 'string' ? b.signature : null,
          format: ANTHROPIC_FORMAT,
          index: j,
        });
        break;
      }
      case 'redacted_thinking':
        details.push({ type: 'reasoning.encrypted', data: b.data, format: ANTHROPIC_FORMAT, index: j });
        break;
      case 'tool_use':
        if (typeof b.id !== 'string' || typeof b.name !== 'string')
          throw badRequest(`${at}.${j}: tool_use needs an id and a name`, `${at}.${j}`);
        calls.push(
          hiddenCache(
            {
              id: b.id,
              type: 'function',
              function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
            },
            b,
          ),
        );
        break;
      default:
        throw unsupported(b, `${at}.${j}`);
    }
  });
  // Plain text goes as a string (what every OpenAI-compatible server takes: some, Groq's among
  // them, refuse an assistant's content parts); parts only when a block carries a cache breakpoint.
  const plain = texts.every((p) => p.type === 'text' && !p.cache_control);
  const m: ChatMessage = {
    role: 'assistant',
    content: texts.length === 0 ? null : plain ? joinTexts(texts as TextPart[], cited, cut) : texts,
  };
  if (reasoning !== undefined) m.reasoning = reasoning;
  if (details.length > 0) m.reasoning_details = details;
  if (calls.length > 0) m.tool_calls = calls;
  if (native || (details.length > 0 && !inCanonicalOrder(content) && allSigned(content)))
    setHidden(m, 'anthropic_content', anthropicOwn(content) as AnthropicNativeBlock[]);
  return m;
}

/**
 * An assistant turn's text blocks as one text. Separate blocks are separate passages ("Looking."
 * before a thinking block, "Sunny." after it), so they are joined by a line break, not run
 * together ("Looking.Sunny."); none is added where one is already at the boundary. Blocks with
 * `citations` are fragments of one passage (Anthropic splits a cited answer at each citation:
 * "Shannon was born in ", "1916", "."), so they are joined as written, and so are the two halves
 * of a text the gateway cut with a signature's block (`cut`, `cutsText`).
 */
function joinTexts(texts: TextPart[], cited: boolean[] | undefined, cut: boolean[] | undefined): string {
  if (texts.length === 1) return texts[0]!.text;
  let out = texts[0]!.text;
  for (let i = 1; i < texts.length; i++) {
    const next = texts[i]!.text;
    const fragment =
      cut?.[i] === true || (cited !== undefined && (cited[i] === true || cited[i - 1] === true));
    const broken = out === '' || next === '' || out.endsWith('\n') || next.startsWith('\n');
    out += fragment || broken ? next : `\n${next}`;
  }
  return out;
}

/** A reasoning text detail with its text in it. */
const holdsText = (d: ReasoningDetail): boolean =>
  d.type === 'reasoning.text' && typeof d.text === 'string' && d.text !== '';

/**
 * A thinking block with no thinking, only a signature the gateway wrote (another upstream's signed
 * reasoning, anthropic-signatures.ts). Between two text blocks it is no passage break: streamed
 * answers used to put one wherever Gemini's signature came, in the middle of a text when it came
 * with text ("Hello wor", signature, "ld"), and a client sends that turn back as it got it. The
 * gateway no longer writes one there, but a conversation may still hold one; its text goes back
 * whole, as the upstream wrote it ("Hello world", not "Hello wor\nld").
 */
const cutsText = (b: Block): boolean =>
  b.type === 'thinking' && (b.thinking === '' || b.thinking == null) && isCarryingSignature(b.signature);

/**
 * Whether the canonical fields give a turn's blocks back as they were: thinking first, then one
 * text block at most, then the tool calls (a turn of thinking and tool calls alone is replayed in
 * place too, by the blocks' indexes: `withThinkingInPlace`). Interleaved thinking with text
 * ([thinking, text, tool_use, thinking, text, tool_use], as Anthropic answers with the
 * interleaved-thinking beta) is not: the text blocks would be joined and the thinking moved first.
 */
function inCanonicalOrder(content: Block[]): boolean {
  if (!content.some((b) => b.type === 'text')) return true;
  // 0: thinking, 1: text, 2: tool calls, in that order and one text block at most.
  let stage = 0;
  for (const b of content) {
    const s = b.type === 'text' ? 1 : b.type === 'tool_use' ? 2 : 0;
    if (s < stage || (s === 1 && stage === 1)) return false;
    stage = s;
  }
  return true;
}

/**
 * Every thinking block of the turn signed by Anthropic (it refuses one without its signature, or
 * with another's): a turn holding another upstream's reasoning, which the gateway answered with an
 * empty signature or one carrying that upstream's (anthropic-signatures.ts), goes by the
 * canonical fields, which leave such a block out.
 */
const allSigned = (content: Block[]): boolean => content.every(signedOrNotThinking);

const signedOrNotThinking = (b: Block): boolean =>
  b.type !== 'thinking' ||
  (typeof b.signature === 'string' && b.signature !== '' && !isCarryingSignature(b.signature));

/**
 * A turn sent to Anthropic as it came (with server tool blocks) without the thinking blocks
 * Anthropic did not sign (another upstream's reasoning: an empty signature, or one carrying that
 * upstream's), which it would refuse, as the canonical fields leave them out.
 */
const anthropicOwn = (content: Block[]): Block[] =>
  content.every(signedOrNotThinking) ? content : content.filter(signedOrNotThinking);

/**
 * Blocks of Anthropic's server tools in an assistant turn (ContentBlockParam in the SDK):
 * `server_tool_use`, `web_search_tool_result`, `web_fetch_tool_result`, `code_execution_tool_result`
 * and the other `*_tool_result` blocks (not `tool_result`, a user block), `mcp_tool_use`,
 * `container_upload`.
 */
function isServerToolBlock(type: string): boolean {
  return (
    type === 'server_tool_use' ||
    type === 'mcp_tool_use' ||
    type === 'container_upload' ||
    (type.endsWith('_tool_result') && type !== 'tool_result')
  );
}

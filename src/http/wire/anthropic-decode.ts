/**
 * Anthropic Messages request (`POST /v1/messages`, schema in anthropic-request-schema.ts) ->
 * the canonical chat request, so it runs through the same pipeline as /v1/chat/completions.
 *
 * - `system` (string or text blocks) -> a system message first; `metadata.user_id` -> `user`;
 *   `stop_sequences` -> `stop`; `fallbacks: [{model}]` (OpenRouter's skin) -> `models`.
 * - Blocks: text (with `cache_control`, as OpenRouter carries it), image (base64 -> data URL, url),
 *   document (base64/url PDF, plain text) -> `file`; tool_use -> `tool_calls` (input as JSON text,
 *   the id kept); tool_result -> a `tool` message (string, text and image content) after the user
 *   turn's earlier parts; thinking / redacted_thinking -> the assistant's `reasoning_details`
 *   (signature and data unchanged, `format` Anthropic's), which the Anthropic adapter replays as
 *   the same blocks. A thinking block whose signature the gateway wrote (`mgr1.`, carrying another
 *   upstream's reasoning: Gemini's thought signatures, anthropic-signatures.ts) gives back the
 *   details it carries, for that upstream, and is never Anthropic's signed thinking; an empty one
 *   between two text blocks does not part them (`cutsText`).
 * - What the canonical request has no field for rides as non-enumerable properties that only the
 *   Anthropic adapter reads (`setHidden`, CacheControl in types.ts): tool_result `is_error`, and
 *   `cache_control` on images, documents, tools, tool_use and tool_result blocks.
 * - Top-level `cache_control` (automatic caching) is put on the last block of the last message.
 * - tools (custom tools, with `input_schema`) -> functions. Anthropic-defined tools (a `type`
 *   other than "custom": server tools such as `web_search_...`, schema-less client tools such as
 *   `bash_...`, `text_editor_...`) have no canonical form: they ride hidden (`anthropic_tools`,
 *   with their place among the custom tools) to an Anthropic upstream, unchanged, and reach no other.
 * - tool_choice auto/any/tool/none -> auto/required/function/none; `disable_parallel_tool_use` ->
 *   `parallel_tool_calls: false`. A choice the chat request cannot say (it names an
 *   Anthropic-defined tool, or only such tools were sent) rides hidden as it is
 *   (`anthropic_tool_choice`). A choice with no tools at all is dropped (`none`/`auto`) or refused.
 * - Assistant blocks of server tools (`server_tool_use`, `web_search_tool_result` and the other
 *   `*_tool_result` blocks, `mcp_tool_use`, `container_upload`) have no canonical form either: the
 *   turn keeps its canonical fields (its text and tool calls) and rides hidden as sent
 *   (`anthropic_content`), which the Anthropic adapter replays unchanged. So does a turn with
 *   signed thinking interleaved with its text (`inCanonicalOrder`), whose order the canonical
 *   fields cannot hold.
 * - thinking enabled -> `reasoning.max_tokens` = budget_tokens (below max_tokens, unless the
 *   client sent the interleaved-thinking beta, as Anthropic's); adaptive -> `reasoning.enabled`
 *   (with `output_config.effort` as the effort), and the `thinking` object as sent rides hidden
 *   (`anthropic_thinking`) for an Anthropic upstream; disabled -> `reasoning.enabled: false`.
 * - `output_config.effort` -> `verbosity` (OpenRouter's mapping, back to `output_config.effort`
 *   on Anthropic models that take it), with or without thinking; alone it turns no thinking on.
 * - The `anthropic-beta` header's values ride hidden (`anthropic_beta`) to an Anthropic upstream,
 *   which gets them beside its channel's `beta`; no other upstream gets them.
 * - `service_tier`, `container`, `context_management`, `mcp_servers` and other fields are ignored.
 */
import { setHidden } from '../../gateway/chat/hidden.js';
import type {
  AnthropicDefinedTool,
  AnthropicNativeBlock,
  CacheControl,
  ChatMessage,
  ChatRequest,
  ContentPart,
  ReasoningDetail,
  ReasoningEffort,
  TextPart,
  ToolCall,
  ToolDefinition,
} from '../../gateway/chat/types.js';
import { badRequest } from '../../gateway/errors.js';
import { ANTHROPIC_FORMAT } from '../../providers/anthropic/anthropic-messages.js';
import { isInterleavedThinking } from '../../providers/anthropic/anthropic-request.js';
import { detailsOfSignature, isCarryingSignature } from './anthropic-signatures.js';

type Block = Record<string, any> & { type: string };

export interface AnthropicRequestBody {
  model: string;
  max_tokens?: number;
  messages: Array<{ role: 'user' | 'assistant'; content: string | Block[] }>;
  system?: string | Block[];
  tools?: Array<Record<string, any>>;
  tool_choice?: { type: string; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: string; budget_tokens?: number };
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream?: boolean;
  metadata?: { user_id?: string | null };
  output_config?: { effort?: string };
  fallbacks?: Array<{ model: string }>;
  cache_control?: unknown;
  [extra: string]: unknown;
}

/**
 * `betas`: the client's `anthropic-beta` values (`anthropicBetas`, anthropic-beta.ts), which ride hidden
 * (`anthropic_beta`) to an Anthropic upstream.
 */
export function decodeAnthropicRequest(
  body: AnthropicRequestBody,
  betas: readonly string[] = [],
): ChatRequest {
  if (body.cache_control && typeof body.cache_control === 'object') markLastBlock(body);
  const messages: ChatMessage[] = [];
  if (body.system !== undefined) {
    const system = systemContent(body.system);
    if (system !== undefined) messages.push({ role: 'system', content: system });
  }
  body.messages.forEach((m, i) => {
    if (m.role === 'user') userTurn(m.content, `messages.${i}.content`, messages);
    else messages.push(assistantTurn(m.content, `messages.${i}.content`));
  });
  const req: ChatRequest = { model: body.model, messages };
  if (body.max_tokens !== undefined) req.max_tokens = body.max_tokens;
  if (body.stream === true) req.stream = true;
  if (body.temperature !== undefined) req.temperature = body.temperature;
  if (body.top_p !== undefined) req.top_p = body.top_p;
  if (body.top_k !== undefined) req.top_k = body.top_k;
  if (body.stop_sequences?.length) req.stop = body.stop_sequences;
  if (body.metadata?.user_id) req.user = body.metadata.user_id;
  if (body.fallbacks?.length) req.models = body.fallbacks.map((f) => f.model);
  const { functions, defined } = splitTools(body.tools ?? []);
  if (functions.length > 0) req.tools = functions;
  if (defined.length > 0) setHidden(req, 'anthropic_tools', defined);
  toolChoice(body.tool_choice, functions, defined, req);
  const reasoning = reasoningOf(body, betas.some(isInterleavedThinking));
  if (reasoning) req.reasoning = reasoning;
  if (body.thinking?.type === 'adaptive') setHidden(req, 'anthropic_thinking', { ...body.thinking });
  if (betas.length > 0) setHidden(req, 'anthropic_beta', betas);
  // Effort is how much a turn spends (text, tool calls and thinking), thinking or not: it is
  // the chat request's `verbosity`, which reaches an Anthropic model that takes effort as
  // `output_config.effort` again (anthropic-effort.ts).
  const effort = body.output_config?.effort;
  if (effort) req.verbosity = effort as ChatRequest['verbosity'];
  return req;
}

/**
 * Top-level `cache_control` (automatic caching) marks the last block of the request, as
 * Anthropic applies it: set on that block here (a string content becomes one text block), unless
 * the block has its own.
 */
function markLastBlock(body: AnthropicRequestBody): void {
  const last = body.messages.at(-1);
  if (!last) return;
  if (typeof last.content === 'string')
    last.content = [{ type: 'text', text: last.content, cache_control: body.cache_control }];
  else {
    const b = last.content.at(-1);
    if (b && b.cache_control === undefined) b.cache_control = body.cache_control;
  }
}

function cacheOf(b: Block): CacheControl | undefined {
  const c = b.cache_control;
  return c && typeof c === 'object' ? (c as CacheControl) : undefined;
}

function systemContent(system: string | Block[]): string | ContentPart[] | undefined {
  if (typeof system === 'string') return system === '' ? undefined : system;
  if (system.length === 0) return undefined;
  return system.map((b, i) => textPart(b, `system.${i}`));
}

function textPart(b: Block, at: string): ContentPart {
  if (typeof b.text !== 'string') throw badRequest(`${at}.text: must be a string`, `${at}.text`);
  const cache = cacheOf(b);
  return cache ? { type: 'text', text: b.text, cache_control: cache } : { type: 'text', text: b.text };
}

function hiddenCache<T extends object>(o: T, b: Block): T {
  const cache = cacheOf(b);
  return cache ? setHidden(o, 'cache_control', cache) : o;
}

function mediaPart(b: Block, at: string): ContentPart {
  const src = b.source as Record<string, any> | undefined;
  if (!src || typeof src !== 'object') throw badRequest(`${at}.source: is required`, `${at}.source`);
  if (b.type === 'image') {
    if (src.type === 'base64' && typeof src.data === 'string' && typeof src.media_type === 'string')
      return hiddenCache(
        { type: 'image_url', image_url: { url: `data:${src.media_type};base64,${src.data}` } },
        b,
      );
    if (src.type === 'url' && typeof src.url === 'string')
      return hiddenCache({ type: 'image_url', image_url: { url: src.url } }, b);
    throw badRequest(`${at}.source: only base64 and url image sources are supported`, `${at}.source`);
  }
  const filename = typeof b.title === 'string' ? b.title : undefined;
  let data: string | undefined;
  if (src.type === 'base64' && typeof src.data === 'string' && typeof src.media_type === 'string')
    data = `data:${src.media_type};base64,${src.data}`;
  else if (src.type === 'text' && typeof src.data === 'string')
    data = `data:text/plain;base64,${Buffer.from(src.data, 'utf8').toString('base64')}`;
  else if (src.type === 'url' && typeof src.url === 'string') data = src.url;
  if (data === undefined)
    throw badRequest(
      `${at}.source: only base64, text and url document sources are supported`,
      `${at}.source`,
    );
  return hiddenCache({ type: 'file', file: { ...(filename ? { filename } : {}), file_data: data } }, b);
}

/** A user turn: its tool results as `tool` messages, the other blocks as user messages, in order. */
function userTurn(content: string | Block[], at: string, out: ChatMessage[]): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  let parts: ContentPart[] = [];
  const flush = () => {
    if (parts.length > 0) out.push({ role: 'user', content: parts });
    parts = [];
  };
  content.forEach((b, j) => {
    const where = `${at}.${j}`;
    switch (b.type) {
      case 'text':
        parts.push(textPart(b, where));
        break;
      case 'image':
      case 'document':
        parts.push(mediaPart(b, where));
        break;
      case 'tool_result':
        flush();
        out.push(toolResult(b, where));
        break;
      default:
        throw unsupported(b, where);
    }
  });
  flush();
}

function toolResult(b: Block, at: string): ChatMessage {
  if (typeof b.tool_use_id !== 'string')
    throw badRequest(`${at}.tool_use_id: is required`, `${at}.tool_use_id`);
  let content: string | ContentPart[] = '';
  if (typeof b.content === 'string') content = b.content;
  else if (Array.isArray(b.content))
    content = (b.content as Block[]).map((c, k) => {
      if (c?.type === 'text') return textPart(c, `${at}.content.${k}`);
      if (c?.type === 'image') return mediaPart(c, `${at}.content.${k}`);
      throw unsupported(c, `${at}.content.${k}`);
    });
  const m: ChatMessage = { role: 'tool', tool_call_id: b.tool_use_id, content };
  if (b.is_error === true) setHidden(m, 'is_error', true);
  return hiddenCache(m, b);
}

function assistantTurn(content: string | Block[], at: string): ChatMessage {
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
          // text as that upstream's, unsigned, which Anthropic is never sent as signed thinking.
          details.push(
            { type: 'reasoning.text', text, format: carried[0]?.format ?? ANTHROPIC_FORMAT, index: j },
            ...carried,
          );
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

function unsupported(b: Block | undefined, at: string) {
  const type = typeof b?.type === 'string' ? b.type : typeof b;
  return badRequest(
    `${at}.type: content block type "${type}" is not supported by this gateway`,
    `${at}.type`,
  );
}

/**
 * Custom tools (no `type`, or "custom") as functions; the Anthropic-defined ones (any other
 * `type`) as they are, each with the number of custom tools before it.
 */
function splitTools(tools: Array<Record<string, any>>): {
  functions: ToolDefinition[];
  defined: AnthropicDefinedTool[];
} {
  const functions: ToolDefinition[] = [];
  const defined: AnthropicDefinedTool[] = [];
  for (const t of tools) {
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      defined.push({ at: functions.length, tool: t });
      continue;
    }
    const fn: ToolDefinition['function'] = { name: t.name };
    if (typeof t.description === 'string') fn.description = t.description;
    if (t.input_schema && typeof t.input_schema === 'object') fn.parameters = t.input_schema;
    const tool = hiddenCache<ToolDefinition>({ type: 'function', function: fn }, t as Block);
    // What the chat tool has no field for goes back on the tool for an Anthropic upstream.
    const { type: _t, name: _n, description: _d, input_schema: _s, cache_control: _c, ...rest } = t;
    if (Object.keys(rest).length > 0) setHidden(tool, 'anthropic_fields', rest);
    functions.push(tool);
  }
  return { functions, defined };
}

function toolChoice(
  tc: AnthropicRequestBody['tool_choice'],
  functions: ToolDefinition[],
  defined: AnthropicDefinedTool[],
  req: ChatRequest,
): void {
  if (!tc) return;
  if (tc.type === 'tool' && !tc.name)
    throw badRequest('tool_choice.name: is required for type "tool"', 'tool_choice.name');
  // A choice naming an Anthropic-defined tool, or any choice with only such tools: only an
  // Anthropic upstream can follow it, and gets it as it is. Any other gets the custom tools
  // without a choice (but still no parallel calls when so asked).
  const named = (t: AnthropicDefinedTool) => t.tool.name === tc.name;
  if (defined.length > 0 && (functions.length === 0 || (tc.type === 'tool' && defined.some(named)))) {
    setHidden(req, 'anthropic_tool_choice', { ...tc });
    if (tc.disable_parallel_tool_use === true && tc.type !== 'none' && functions.length > 0)
      req.parallel_tool_calls = false;
    return;
  }
  if (functions.length === 0) {
    if (tc.type === 'none' || tc.type === 'auto') return;
    throw badRequest('tool_choice: requires a tool to call, and tools is empty or missing', 'tool_choice');
  }
  if (tc.type === 'auto') req.tool_choice = 'auto';
  else if (tc.type === 'none') req.tool_choice = 'none';
  else if (tc.type === 'any') req.tool_choice = 'required';
  else req.tool_choice = { type: 'function', function: { name: tc.name! } };
  if (tc.disable_parallel_tool_use === true && tc.type !== 'none') req.parallel_tool_calls = false;
}

/**
 * `interleaved`: the client sent the interleaved-thinking beta, with which Anthropic takes a
 * `budget_tokens` at or past `max_tokens` (the budget is then across all the thinking blocks of
 * the turn); without it Anthropic refuses one, and so does the gateway.
 */
function reasoningOf(body: AnthropicRequestBody, interleaved: boolean): ChatRequest['reasoning'] {
  const t = body.thinking;
  const effort = body.output_config?.effort as ReasoningEffort | undefined;
  // Effort alone turns no thinking on (it goes on as `verbosity`, see above).
  if (!t) return undefined;
  if (t.type === 'disabled') return { enabled: false };
  if (t.type === 'enabled') {
    if (t.budget_tokens === undefined)
      throw badRequest(
        'thinking.budget_tokens: is required when thinking is enabled',
        'thinking.budget_tokens',
      );
    if (!interleaved && body.max_tokens !== undefined && t.budget_tokens >= body.max_tokens)
      throw badRequest(
        'thinking.budget_tokens: must be less than max_tokens (or send the anthropic-beta interleaved-thinking-2025-05-14)',
        'thinking.budget_tokens',
      );
    return { max_tokens: t.budget_tokens };
  }
  return effort ? { effort } : { enabled: true };
}

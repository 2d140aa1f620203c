/**
 * What runs on a chat request body before its schema (chat-request-schema.ts) checks it, inside
 * the same validator (`prepareBody`): explicit nulls, an empty tool list and the legacy spellings
 * of reasoning and video parts are rewritten in place to the one form the schema and every adapter
 * read. The Responses schema shares `nullMeansAbsent`.
 */

/** What runs on a body before the schema checks it: one spelling of "not given". */
export function prepareChatBody(body: unknown): void {
  nullMeansAbsent(body);
  emptyToolsMeanNone(body);
  includeReasoning(body);
  legacyVideoParts(body);
}

/**
 * OpenRouter's legacy video part, `{type: "input_video", video_url: {url}}` (as @openrouter/sdk
 * still sends its deprecated LegacyChatContentVideo; a client that put the object under
 * `input_video` is read alike), becomes the current `{type: "video_url", video_url: {url}}`: one
 * part type for every adapter, and the one vLLM and OpenRouter upstreams take. The part keeps its
 * other fields; a wrong shape inside is left for the schema to refuse, named under `video_url`.
 */
export function legacyVideoParts(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const messages = (body as Record<string, unknown>).messages;
  if (!Array.isArray(messages)) return;
  for (const m of messages) {
    const content = m !== null && typeof m === 'object' ? (m as Record<string, unknown>).content : undefined;
    if (!Array.isArray(content)) continue;
    for (const p of content) {
      if (p === null || typeof p !== 'object' || (p as Record<string, unknown>).type !== 'input_video')
        continue;
      const part = p as Record<string, unknown>;
      part.type = 'video_url';
      if (part.input_video === undefined) continue;
      if (part.video_url === undefined) part.video_url = part.input_video;
      delete part.input_video;
    }
  }
}

/**
 * OpenRouter's legacy `include_reasoning` (older clients and the OpenAI SDK's `extra_body` still
 * send it): `true` is `reasoning: {}`, `false` is `reasoning: {exclude: true}`. It becomes that
 * `reasoning`, so every adapter and the answer's reasoning filter read one field, an upstream that
 * speaks OpenRouter gets the current spelling, and `provider.require_parameters` counts
 * `reasoning`. An `exclude` the request's own `reasoning` sets wins. A value that is not a boolean
 * (or a `reasoning` that is not an object) is left for the schema to refuse.
 */
export function includeReasoning(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const b = body as Record<string, unknown>;
  const include = b.include_reasoning;
  if (typeof include !== 'boolean') return;
  const r = b.reasoning;
  if (r !== undefined && (r === null || typeof r !== 'object' || Array.isArray(r))) return;
  const reasoning = (r ?? {}) as Record<string, unknown>;
  if (!include && reasoning.exclude === undefined) reasoning.exclude = true;
  b.reasoning = reasoning;
  delete b.include_reasoning;
}

/**
 * `tools: []` means no tools, and is sent that way: OpenAI refuses an empty array (400 "[] is too
 * short - 'tools'"), and frameworks send one whenever their tool list is empty. `tool_choice`
 * `none` or `auto` and `parallel_tool_calls` go with it (with an empty array or with no `tools` at
 * all), since OpenAI refuses them without tools and they mean nothing then. A choice that demands
 * a tool (`required`, a named function, `allowed_tools`) is kept, for `planChat` to refuse: no
 * tool can be called.
 */
export function emptyToolsMeanNone(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const b = body as Record<string, unknown>;
  const tools = b.tools;
  if (tools !== undefined && (!Array.isArray(tools) || tools.length > 0)) return;
  const choice = b.tool_choice;
  if (choice !== undefined && choice !== 'none' && choice !== 'auto') return;
  delete b.tools;
  delete b.tool_choice;
  delete b.parallel_tool_calls;
}

/** Objects inside the request whose null members also mean "not given". */
const NULLABLE_MEMBERS = ['provider', 'reasoning', 'usage', 'stream_options'] as const;

/**
 * `null` for an optional field means "not given", as OpenAI's and OpenRouter's own types declare
 * (`temperature: number | null`, `tool_calls?: ... | null`): clients built on them (LangChain,
 * LiteLLM, a Python SDK message dumped back into the history) send explicit nulls. They are
 * removed before the schema checks the body, so everything after it sees one spelling of absent
 * and no null reaches an upstream that would refuse it. Kept: `model` and `messages` (a null there
 * is a mistake, and the schema says so) and a message's `content` (null beside tool calls).
 */
export function nullMeansAbsent(body: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const b = body as Record<string, unknown>;
  for (const key in b) {
    if (b[key] === null && key !== 'model' && key !== 'messages') delete b[key];
  }
  for (const key of NULLABLE_MEMBERS) {
    const v = b[key];
    if (v !== undefined) dropNulls(v);
  }
  const messages = b.messages;
  if (Array.isArray(messages)) {
    for (const m of messages) dropNulls(m, 'content');
  }
}

function dropNulls(value: unknown, keep?: string): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const o = value as Record<string, unknown>;
  for (const key in o) {
    if (o[key] === null && key !== keep) delete o[key];
  }
}

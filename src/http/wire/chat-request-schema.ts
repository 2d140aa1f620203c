import { type TSchema, Type } from 'typebox';
import { prepareBody } from '../validation.js';
import { checkChatBody } from './chat-request-check.js';
import { prepareChatBody } from './chat-request-prepare.js';

/**
 * JSON Schema of `POST /v1/chat/completions`, compiled once by Fastify's ajv. Ranges are those
 * of interface.md §8 and decisions.md; every violation is a 400 naming the parameter. Unknown
 * top-level fields are accepted (SDKs send newer OpenAI fields) and forwarded only where an
 * adapter knows them.
 */
const Num = (opts: Parameters<typeof Type.Number>[0]) => Type.Number(opts);
/** A string enum as `{enum}` so a bad value reads "must be one of ..." rather than an anyOf dump. */
const StrEnum = <T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values] });
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
const Opt = Type.Optional;
const NullableObj = (props: Parameters<typeof Type.Object>[0]) =>
  Type.Union([Type.Object(props, { additionalProperties: true }), Type.Null()]);

/**
 * Anthropic's prompt-cache breakpoint as OpenRouter takes it on parts (openrouter.md §2.2), and as
 * the Anthropic adapter reads it on tools, tool calls and tool messages too: any other shape would
 * reach an Anthropic upstream and be its 400, after an upstream attempt.
 */
const CacheControl = Type.Object(
  { type: Type.Literal('ephemeral'), ttl: Opt(StrEnum(['5m', '1h'])) },
  { additionalProperties: true },
);
const TextPart = Type.Object(
  { type: Type.Literal('text'), text: Type.String(), cache_control: Opt(CacheControl) },
  { additionalProperties: true },
);
/**
 * OpenAI's detail levels plus OpenRouter's `original` (openrouter.md §2.2; the @openrouter/sdk
 * type lists the same four). Anything else would pass on one upstream and be a 400 at OpenAI.
 */
const IMAGE_DETAILS = ['auto', 'low', 'high', 'original'] as const;
const ImagePart = Type.Object(
  {
    type: Type.Literal('image_url'),
    image_url: Type.Object(
      { url: Type.String({ minLength: 1 }), detail: Opt(StrEnum(IMAGE_DETAILS)) },
      { additionalProperties: true },
    ),
    cache_control: Opt(CacheControl),
  },
  { additionalProperties: true },
);
/**
 * `format` stays open (OpenRouter lists wav, mp3, aiff, aac, ogg, flac, m4a, pcm16, pcm24; upstreams
 * add more) but not empty: Gemini gets it as the MIME type `audio/<format>`.
 */
const AudioPart = Type.Object(
  {
    type: Type.Literal('input_audio'),
    input_audio: Type.Object(
      { data: Type.String({ minLength: 1 }), format: Type.String({ minLength: 1 }) },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);
const FilePart = Type.Object(
  {
    type: Type.Literal('file'),
    file: Type.Object(
      { filename: Opt(Type.String()), file_data: Opt(Type.String()), file_id: Opt(Type.String()) },
      { additionalProperties: true },
    ),
    cache_control: Opt(CacheControl),
  },
  { additionalProperties: true },
);
/**
 * OpenRouter's video part (openrouter.md §2.2), which vLLM takes too: `url` as for images (an
 * http(s) URL, a `gs://` URI, or a `data:video/...;base64,` URL), plus OpenRouter's optional
 * `processing`, passed on as sent. The legacy `input_video` spelling is read as this before the
 * schema runs (legacyVideoParts).
 */
const VideoPart = Type.Object(
  {
    type: Type.Literal('video_url'),
    video_url: Type.Object({ url: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
  },
  {
    additionalProperties: true,
    description:
      'OpenRouter\'s legacy `{"type": "input_video", "video_url": {"url": ...}}` is accepted as this.',
  },
);
/** `{name}` of a function, as tools, tool calls and a named tool_choice carry it. */
const FunctionName = (props: Parameters<typeof Type.Object>[0] = {}) =>
  Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 64 }), ...props },
    { additionalProperties: true },
  );
/**
 * Objects whose `type` says which member carries the rest: with no type or type "function",
 * `function` is required and checked; other types (OpenAI's "custom" tools, "allowed_tools")
 * pass as they are, for the upstreams that know them.
 */
const FunctionTyped = (fn: TSchema, props: Parameters<typeof Type.Object>[0] = {}) =>
  Type.Unsafe<Record<string, unknown>>({
    ...Type.Object({ type: Opt(Type.String()), function: Opt(fn), ...props }, { additionalProperties: true }),
    if: { properties: { type: { not: { const: 'function' } } }, required: ['type'] },
    else: { required: ['function'] },
  });
const ToolCall = FunctionTyped(
  FunctionName({
    arguments: Opt(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })])),
  }),
  { id: Opt(Type.String()), cache_control: Opt(CacheControl) },
);
/** OpenAI's assistant content part for a refusal: a turn replayed from an earlier refusal. */
const RefusalPart = Type.Object(
  { type: Type.Literal('refusal'), refusal: Type.String() },
  { additionalProperties: true },
);
const Part = Type.Union([TextPart, ImagePart, AudioPart, FilePart, VideoPart, RefusalPart]);
/** The part types of a message other than the assistant's, which cannot carry a refusal. */
const NOT_ASSISTANT_PARTS = ['text', 'image_url', 'input_audio', 'file', 'video_url'];

const MessageObject = Type.Object(
  {
    role: StrEnum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: Opt(Type.Union([Type.String(), Type.Array(Part), Type.Null()])),
    name: Opt(Type.String()),
    tool_calls: Opt(Type.Array(ToolCall)),
    tool_call_id: Opt(Type.String({ minLength: 1 })),
    // A tool message's breakpoint goes on its tool_result at Anthropic; checked on any role.
    cache_control: Opt(CacheControl),
    // An assistant turn replayed from an earlier refusal (`content: null, refusal: "..."`):
    // forwarded as is to OpenAI-compatible upstreams, sent as text to the others.
    refusal: Opt(Type.String()),
    reasoning_details: Opt(
      Type.Union([
        Type.Array(Type.Object({ type: Opt(Type.String()) }, { additionalProperties: true })),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: true },
);
/**
 * A refusal part is the assistant's only: elsewhere its type is named as the one not accepted.
 * So is a null or missing `content` (OpenAI's assistant turn of tool calls or a refusal): any
 * other message without content is a 400 naming it (decisions.md: content is a string or an
 * array of parts), rather than reaching OpenAI-compatible upstreams as sent and being left out
 * on the way to Anthropic and Gemini. A `tool` message names the call it answers (`tool_call_id`,
 * required by OpenAI and OpenRouter): without it Anthropic got a made-up `tool_use_id` and Gemini
 * a `functionResponse` of a made-up name.
 */
const Message = Type.Unsafe<Record<string, unknown>>({
  ...MessageObject,
  if: { properties: { role: { const: 'assistant' } } },
  else: {
    required: ['content'],
    // (if/else as above: no `then` key.)
    if: { properties: { role: { not: { const: 'tool' } } } },
    else: { required: ['tool_call_id'] },
    properties: {
      content: {
        anyOf: [
          { type: 'string', 'x-accepts': 'a string' },
          { type: 'array', 'x-accepts': 'an array of parts (null is for assistant messages only)' },
        ],
        items: { properties: { type: { type: 'string', enum: NOT_ASSISTANT_PARTS } } },
      },
    },
  },
});

/**
 * A function tool's definition. Its name follows OpenAI's and OpenRouter's rule (openrouter.md
 * §2.3: 1 to 64 of `a-zA-Z0-9_-`), which Anthropic's tool names share: another name passed one
 * upstream and was refused by the next. `parameters` is a JSON Schema object (or null, not
 * given): a string or an array reached Anthropic as `{"0": "x", "type": "object"}`.
 */
const ToolFunction = Type.Object(
  {
    name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$', 'x-accepts': '1 to 64 of a-z, A-Z, 0-9, _ and -' }),
    parameters: Opt(
      Type.Union([
        Type.Object({}, { additionalProperties: true, 'x-accepts': 'an object (a JSON Schema)' }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: true },
);
const Tool = FunctionTyped(ToolFunction, { cache_control: Opt(CacheControl) });

/**
 * OpenRouter's plugins (openrouter.md §7): objects with a string `id`, `enabled: false` turning
 * one off. Which ids are served, and how, is `checkChatBody`'s (chat-request-check.ts).
 */
const Plugin = Type.Object(
  { id: Type.String({ minLength: 1 }), enabled: Opt(Type.Boolean()) },
  { additionalProperties: true },
);

// A price as a number or a decimal string ("1", "0.5", ".5", "1."), USD per million tokens.
const Price = Type.Union([
  Type.Number({ minimum: 0 }),
  Type.String({ pattern: '^(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)$', 'x-accepts': 'a decimal string' }),
]);
const SORTS = ['price', 'throughput', 'latency', 'exacto'] as const;

export const ChatRequestSchema = prepareBody(
  Type.Object(
    {
      model: Opt(Type.String({ minLength: 1, maxLength: 256 })),
      messages: Type.Array(Message, { minItems: 1 }),
      models: Opt(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 10 })),
      provider: Opt(
        NullableObj({
          order: Opt(Type.Array(Type.String())),
          only: Opt(Type.Array(Type.String())),
          ignore: Opt(Type.Array(Type.String())),
          allow_fallbacks: Opt(Type.Boolean()),
          require_parameters: Opt(Type.Boolean()),
          data_collection: Opt(StrEnum(['allow', 'deny'])),
          zdr: Opt(Type.Boolean()),
          quantizations: Opt(Type.Array(Type.String())),
          sort: Opt(
            Type.Union([
              Type.Literal('price'),
              Type.Literal('throughput'),
              Type.Literal('latency'),
              Type.Literal('exacto'),
              Type.Object(
                // Both optional and nullable, as @openrouter/sdk types them: no `by` is no sort.
                {
                  by: Opt(Type.Union([StrEnum(SORTS), Type.Null()])),
                  partition: Opt(Type.Union([StrEnum(['model', 'none']), Type.Null()])),
                },
                { additionalProperties: true },
              ),
            ]),
          ),
          max_price: Opt(
            Type.Object(
              { prompt: Opt(Price), completion: Opt(Price), request: Opt(Price), image: Opt(Price) },
              { additionalProperties: true },
            ),
          ),
        }),
      ),
      reasoning: Opt(
        NullableObj({
          effort: Opt(Type.Unsafe<string | null>({ type: ['string', 'null'], enum: [...EFFORTS, null] })),
          max_tokens: Opt(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
          exclude: Opt(Type.Boolean()),
          enabled: Opt(Type.Boolean()),
        }),
      ),
      reasoning_effort: Opt(StrEnum(EFFORTS)),
      // OpenRouter's legacy switch, folded into `reasoning` before this schema runs
      // (includeReasoning); what is left here is a value that is not a boolean.
      include_reasoning: Opt(Type.Boolean()),
      usage: Opt(NullableObj({ include: Opt(Type.Boolean()) })),
      transforms: Opt(Type.Array(StrEnum(['middle-out']), { maxItems: 8 })),
      plugins: Opt(Type.Array(Plugin, { maxItems: 16 })),
      stream: Opt(Type.Boolean()),
      stream_options: Opt(NullableObj({ include_usage: Opt(Type.Boolean()) })),
      max_tokens: Opt(Type.Integer({ minimum: 1 })),
      max_completion_tokens: Opt(Type.Integer({ minimum: 1 })),
      temperature: Opt(Num({ minimum: 0, maximum: 2 })),
      // An integer a JSON number holds exactly (openrouter.md §2.5: the 53-bit safe range). Past
      // it the parsed value is not the one sent (2^53 + 1 reads as 2^53), and 1e20 would be sent
      // on as 100000000000000000000, beyond the int64 OpenAI takes.
      seed: Opt(Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })),
      top_p: Opt(Num({ exclusiveMinimum: 0, maximum: 1 })),
      top_k: Opt(Type.Integer({ minimum: 1 })),
      frequency_penalty: Opt(Num({ minimum: -2, maximum: 2 })),
      presence_penalty: Opt(Num({ minimum: -2, maximum: 2 })),
      repetition_penalty: Opt(Num({ exclusiveMinimum: 0, maximum: 2 })),
      // Keys are token ids; any other key is refused, so no value escapes the range check.
      logit_bias: Opt(
        Type.Unsafe<Record<string, number>>({
          type: 'object',
          propertyNames: { pattern: '^[0-9]{1,10}$', 'x-accepts': 'a token id (an integer string)' },
          additionalProperties: Num({ minimum: -100, maximum: 100 }),
        }),
      ),
      logprobs: Opt(Type.Boolean()),
      top_logprobs: Opt(Type.Integer({ minimum: 0, maximum: 20 })),
      min_p: Opt(Num({ minimum: 0, maximum: 1 })),
      top_a: Opt(Num({ minimum: 0, maximum: 1 })),
      n: Opt(Type.Integer({ minimum: 1, maximum: 1 })),
      stop: Opt(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()])),
      tools: Opt(Type.Array(Tool, { maxItems: 512 })),
      tool_choice: Opt(
        Type.Union([
          Type.Literal('none'),
          Type.Literal('auto'),
          Type.Literal('required'),
          FunctionTyped(FunctionName()),
        ]),
      ),
      parallel_tool_calls: Opt(Type.Union([Type.Boolean(), Type.Null()])),
      // OpenRouter's switch (openrouter.md §2.4), sent to upstreams that speak OpenRouter.
      structured_outputs: Opt(Type.Boolean()),
      response_format: Opt(
        Type.Unsafe<Record<string, unknown>>({
          ...Type.Object(
            {
              type: StrEnum(['text', 'json_object', 'json_schema']),
              json_schema: Opt(
                Type.Object(
                  {
                    // OpenAI's and OpenRouter's rule for the name (openrouter.md §2.4).
                    name: Opt(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
                    schema: Opt(Type.Object({}, { additionalProperties: true })),
                  },
                  { additionalProperties: true },
                ),
              ),
            },
            { additionalProperties: true },
          ),
          // (if/else rather than if/then: an object with a `then` key is a thenable.) OpenAI and
          // OpenRouter require the schema's `name`, and refuse a request without it.
          if: { properties: { type: { not: { const: 'json_schema' } } } },
          else: { required: ['json_schema'], properties: { json_schema: { required: ['name'] } } },
        }),
      ),
      user: Opt(Type.String({ maxLength: 256 })),
      // Anthropic's metadata.user_id takes either, and at most 256 characters.
      safety_identifier: Opt(Type.String({ maxLength: 256 })),
      // Anthropic's automatic prompt caching (openrouter.md §2.5), sent to Anthropic as it is.
      cache_control: Opt(CacheControl),
      // OpenRouter's (and OpenAI's) limits, openrouter.md §2.5: beyond them OpenAI answers 400,
      // and the other upstreams drop the field, so a request would pass on one and fail on its
      // fallback.
      session_id: Opt(Type.String({ maxLength: 256 })),
      metadata: Opt(
        Type.Record(Type.String(), Type.String({ maxLength: 512 }), {
          maxProperties: 16,
          propertyNames: { maxLength: 64 },
        }),
      ),
      verbosity: Opt(StrEnum(['low', 'medium', 'high', 'xhigh', 'max'])),
      modalities: Opt(Type.Array(StrEnum(['text', 'image', 'audio']), { maxItems: 3 })),
      service_tier: Opt(StrEnum(['auto', 'default', 'fast', 'flex', 'priority', 'scale'])),
      prediction: Opt(
        Type.Object(
          { type: Type.Literal('content'), content: Type.Union([Type.String(), Type.Array(TextPart)]) },
          { additionalProperties: true },
        ),
      ),
    },
    { additionalProperties: true },
  ),
  prepareChatBody,
  checkChatBody,
);

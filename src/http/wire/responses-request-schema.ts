import { Type } from 'typebox';
import { prepareBody } from '../validation.js';
import { nullMeansAbsent } from './chat-request-prepare.js';
import { ChatRequestSchema } from './chat-request-schema.js';

/**
 * JSON Schema of `POST /v1/responses` (OpenAI's `ResponseCreateParams`, the `openai` SDK's
 * resources/responses types): the top-level fields and their ranges, so a mistake is a 400 naming
 * the field, and the fields of input items that have one type only (InputItem). The rest of the
 * input items, tools and tool_choice are checked by the decoder (`responses-decode.ts`), which
 * names what it cannot translate (a built-in tool, an item type). Fields that need stored
 * state (`previous_response_id`, `conversation`, `background`) pass the schema and are refused by
 * the decoder with a message that says why. Unknown fields are accepted (the SDKs send newer ones)
 * and ignored. `null` means "not given", as OpenAI's types declare (`instructions: null`).
 */
const Opt = Type.Optional;
const Obj = (props: Parameters<typeof Type.Object>[0]) => Type.Object(props, { additionalProperties: true });
const StrEnum = <T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values] });
/** The chat request's own definitions, where the meaning is the same (ranges, routing fields). */
const Chat = ChatRequestSchema.properties;

const Format = Type.Unsafe<Record<string, unknown>>({
  ...Obj({
    type: StrEnum(['text', 'json_object', 'json_schema']),
    // OpenAI's rule for the name, as for the chat request's response_format.
    name: Opt(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
    schema: Opt(Type.Object({}, { additionalProperties: true })),
    strict: Opt(Type.Union([Type.Boolean(), Type.Null()])),
    description: Opt(Type.String()),
  }),
  // (if/else: an object with a `then` key is a thenable.) json_schema needs its name and schema.
  if: { properties: { type: { not: { const: 'json_schema' } } } },
  else: { required: ['name', 'schema'] },
});

/**
 * Text parts of a message's `content` (and of a `function_call_output`'s `output`): OpenAI's
 * `input_text` and `output_text` carry `text` as a string. A part of another type, or no array,
 * is left to the decoder. (if/else, as above: no `then` key.)
 */
const TEXT_PARTS = ['input_text', 'output_text'];
const Parts = {
  items: {
    if: { properties: { type: { not: { enum: TEXT_PARTS } } } },
    else: { required: ['text'], properties: { text: { type: 'string' } } },
  },
};
/**
 * An input item. The decoder reads its type and role; here are the fields it would otherwise have
 * to guess at: a `function_call` replayed from an earlier answer has its `call_id`, a `name` (as a
 * chat tool call's, 1 to 64 characters) and its `arguments` as a string of JSON, as OpenAI's
 * `ResponseFunctionToolCall` has them. Each mistake is a 400 naming the field (`input.3.arguments`).
 */
const InputItem = Type.Unsafe<Record<string, unknown>>({
  ...Obj({}),
  properties: { content: Parts, output: Parts },
  if: { properties: { type: { not: { const: 'function_call' } } } },
  else: {
    required: ['call_id', 'name', 'arguments'],
    properties: {
      call_id: { type: 'string' },
      name: { type: 'string', minLength: 1, maxLength: 64 },
      arguments: { type: 'string' },
    },
  },
});

export const ResponsesRequestSchema = prepareBody(
  Obj({
    model: Chat.model,
    input: Opt(Type.Union([Type.String(), Type.Array(InputItem)])),
    instructions: Opt(Type.String()),
    tools: Opt(Type.Array(Obj({ type: Type.String() }), { maxItems: 512 })),
    tool_choice: Opt(Type.Union([StrEnum(['none', 'auto', 'required']), Obj({ type: Type.String() })])),
    parallel_tool_calls: Opt(Type.Boolean()),
    max_output_tokens: Opt(Type.Integer({ minimum: 1 })),
    temperature: Chat.temperature,
    top_p: Chat.top_p,
    reasoning: Opt(
      Obj({
        effort: Opt(StrEnum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
        summary: Opt(StrEnum(['auto', 'concise', 'detailed'])),
      }),
    ),
    text: Opt(Obj({ format: Opt(Format), verbosity: Opt(StrEnum(['low', 'medium', 'high'])) })),
    metadata: Chat.metadata,
    user: Chat.user,
    safety_identifier: Chat.safety_identifier,
    stream: Opt(Type.Boolean()),
    store: Opt(Type.Boolean()),
    include: Opt(Type.Array(Type.String())),
    previous_response_id: Opt(Type.String()),
    background: Opt(Type.Boolean()),
    // OpenRouter's Responses API takes its routing fields too.
    models: Chat.models,
    provider: Chat.provider,
  }),
  prepareResponsesBody,
);

/** Top-level nulls, and nulls in `reasoning` and `text` (`verbosity: ... | null`), mean "not given". */
function prepareResponsesBody(body: unknown): void {
  nullMeansAbsent(body);
  const text = (body as { text?: unknown } | null)?.text;
  if (text !== null && typeof text === 'object' && (text as { verbosity?: unknown }).verbosity === null)
    delete (text as { verbosity?: unknown }).verbosity;
}

import { Type } from 'typebox';

/**
 * JSON Schema of `POST /v1/messages` (Anthropic's `MessageCreateParams`, reference/providers.md
 * §2.2): the top-level fields and their ranges, so a mistake is a 400 naming the field in
 * Anthropic's error shape. Content blocks are checked by the decoder (anthropic-content-decode.ts,
 * anthropic-assistant-decode.ts), which names the block that it cannot translate. Unknown fields
 * are accepted (the SDKs and Claude Code send newer ones: `context_management`, `container`...)
 * and ignored.
 */
const Opt = Type.Optional;
const Obj = (props: Parameters<typeof Type.Object>[0]) => Type.Object(props, { additionalProperties: true });
const Block = Obj({ type: Type.String() });
const TextBlock = Obj({ type: Type.Literal('text'), text: Type.String() });

const Message = Obj({
  role: Type.Unsafe<'user' | 'assistant'>({ type: 'string', enum: ['user', 'assistant'] }),
  content: Type.Union([Type.String(), Type.Array(Block)]),
});

const Tool = Obj({ name: Type.String({ minLength: 1, maxLength: 128 }) });

const ToolChoice = Obj({
  type: Type.Unsafe<string>({ type: 'string', enum: ['auto', 'any', 'tool', 'none'] }),
  name: Opt(Type.String({ minLength: 1 })),
  disable_parallel_tool_use: Opt(Type.Boolean()),
});

const Thinking = Obj({
  type: Type.Unsafe<string>({ type: 'string', enum: ['enabled', 'disabled', 'adaptive'] }),
  budget_tokens: Opt(Type.Integer({ minimum: 1 })),
});

/** What count_tokens takes: the prompt half of a message request. */
const PROMPT = {
  model: Type.String({ minLength: 1, maxLength: 256 }),
  messages: Type.Array(Message, { minItems: 1 }),
  system: Opt(Type.Union([Type.String(), Type.Array(TextBlock)])),
  tools: Opt(Type.Array(Tool, { maxItems: 512 })),
  tool_choice: Opt(ToolChoice),
  thinking: Opt(Thinking),
};

export const AnthropicMessagesSchema = Obj({
  ...PROMPT,
  // Anthropic requires it; 0 (a prompt-cache warm-up) is not supported here.
  max_tokens: Type.Integer({ minimum: 1 }),
  stop_sequences: Opt(Type.Array(Type.String())),
  temperature: Opt(Type.Number({ minimum: 0, maximum: 1 })),
  top_p: Opt(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  top_k: Opt(Type.Integer({ minimum: 1 })),
  stream: Opt(Type.Boolean()),
  metadata: Opt(Obj({ user_id: Opt(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])) })),
  output_config: Opt(
    Obj({
      effort: Opt(Type.Unsafe<string>({ type: 'string', enum: ['low', 'medium', 'high', 'xhigh', 'max'] })),
    }),
  ),
  // OpenRouter's Anthropic skin (openrouter.md §3): models tried after `model`, at most 3.
  fallbacks: Opt(Type.Array(Obj({ model: Type.String({ minLength: 1, maxLength: 256 }) }), { maxItems: 3 })),
});

export const AnthropicCountTokensSchema = Obj(PROMPT);

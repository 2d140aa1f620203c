/**
 * Canonical answers -> OpenAI Responses objects and stream events (the `openai` SDK's
 * resources/responses types: `Response`, `ResponseStreamEvent`).
 *
 * - output: a `reasoning` item when the model reasoned (its text as one `summary_text`; with
 *   `include: ["reasoning.encrypted_content"]` the canonical `reasoning_details` wrapped in
 *   `encrypted_content`, responses-reasoning.ts), a `message` item with one `output_text` part
 *   (a refusal's text too), then one `function_call` item per tool call (the call id as `call_id`),
 *   or a `custom_tool_call` item (its `input` out of the arguments) for a call of a custom tool.
 * - status: `completed`; `incomplete` with `incomplete_details.reason` `max_output_tokens` (finish
 *   reason length) or `content_filter`; `failed` with `error` when a stream failed mid-way, or
 *   the upstream ended its answer with finish reason `error` (OpenRouter's for a provider that
 *   failed part-way: what came before it is not a whole answer).
 * - usage: input_tokens counts cached tokens too (OpenAI's meaning), with `cached_tokens` and
 *   `reasoning_tokens` in the details.
 * - The request's settings are echoed as the Response type requires them (responsesEcho).
 *   `output_text` is left out: the SDK computes it from `output`.
 * - Streams: responses-stream.ts.
 */
import type { ChatResult, ChatUsage, FinishReason } from '../../gateway/chat/types.js';
import type { GatewayError } from '../../gateway/errors.js';
import { customToolNames, type ResponsesRequestBody } from './responses-decode.js';
import { wrapReasoning } from './responses-reasoning.js';

export type Obj = Record<string, unknown>;

/** The request's settings as a Response echoes them, and what shapes the answer. */
export interface ResponsesEcho {
  fields: Obj;
  /** `include` asked for `reasoning.encrypted_content`. */
  encryptedReasoning: boolean;
  /** The request's `custom` tools: a call of one is a `custom_tool_call` item. */
  customTools: ReadonlySet<string>;
}

export function responsesEcho(body: ResponsesRequestBody): ResponsesEcho {
  const format = body.text?.format ?? { type: 'text' };
  const reasoning = body.reasoning
    ? { effort: body.reasoning.effort ?? null, summary: body.reasoning.summary ?? null }
    : null;
  const fields: Obj = {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning,
    // Accepted, and never true of what this gateway does: nothing is stored.
    store: false,
    temperature: body.temperature ?? null,
    text: { format, ...(body.text?.verbosity ? { verbosity: body.text.verbosity } : {}) },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: 'disabled',
    metadata: body.metadata ?? {},
  };
  if (body.user !== undefined) fields.user = body.user;
  if (body.safety_identifier !== undefined) fields.safety_identifier = body.safety_identifier;
  return {
    fields,
    encryptedReasoning: body.include?.includes('reasoning.encrypted_content') === true,
    customTools: customToolNames(body),
  };
}

export function responsesUsage(u: ChatUsage | undefined): Obj | null {
  if (!u) return null;
  const input = int(u.prompt_tokens);
  const output = int(u.completion_tokens);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: int(u.prompt_tokens_details?.cached_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: int(u.completion_tokens_details?.reasoning_tokens) },
    total_tokens: input + output,
  };
}

const int = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? Math.max(0, Math.round(n)) : 0);

export type Status = 'completed' | 'incomplete' | 'failed' | 'in_progress';

/** The Response's status and incomplete_details for a finish reason. */
export function finishStatus(finish: FinishReason | null | undefined): {
  status: Status;
  incomplete_details: Obj | null;
  error?: Obj;
} {
  if (finish === 'error')
    return { status: 'failed', incomplete_details: null, error: UPSTREAM_ENDED_IN_ERROR };
  if (finish === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

const UPSTREAM_ENDED_IN_ERROR = {
  code: 'server_error',
  message: 'the upstream ended its answer with an error (finish reason "error")',
};

/**
 * A function call's item status. An answer cut by the length limit was cut in its last call when
 * that call's arguments are not whole JSON (cut mid-arguments): that call is `incomplete`, as
 * OpenAI marks it; calls before it, and a last call that was complete, are `completed`.
 */
export function callStatus(
  finish: FinishReason | null | undefined,
  args: string,
  last: boolean,
): 'completed' | 'incomplete' {
  if (finish !== 'length' || !last) return 'completed';
  try {
    JSON.parse(args);
    return 'completed';
  } catch {
    return 'incomplete';
  }
}

/** OpenAI's `ResponseError.code` for a gateway failure. */
export function errorCode(e: GatewayError): string {
  if (e.status === 429) return 'rate_limit_exceeded';
  if (e.status === 400) return 'invalid_prompt';
  return 'server_error';
}

export interface ResponseHead {
  id: string;
  createdAt: number;
  model: string;
  echo: ResponsesEcho;
}

export function responseObject(
  head: ResponseHead,
  state: { status: Status; incomplete_details?: Obj | null; error?: Obj | null },
  output: Obj[],
  usage: Obj | null,
): Obj {
  return {
    id: head.id,
    object: 'response',
    created_at: head.createdAt,
    status: state.status,
    ...(state.status === 'completed' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    model: head.model,
    output,
    ...head.echo.fields,
    usage,
  };
}

/** Item ids: the response id's unique part with a per-item prefix and number. */
export const itemId = (head: ResponseHead, prefix: string, n: number) => `${prefix}_${head.id.slice(5)}_${n}`;

export const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/**
 * A custom tool's input out of its function call's arguments: the `input` string of
 * `{"input": ...}`, as the function was declared (responses-decode.ts customFunction); arguments
 * that are not that are the input as they are.
 */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    const input = (parsed as { input?: unknown } | null)?.input;
    if (typeof parsed === 'object' && !Array.isArray(parsed) && typeof input === 'string') return input;
  } catch {}
  return args;
}

export function encodeResponse(head: ResponseHead, result: ChatResult, usage: ChatUsage | undefined): string {
  const choice = result.choices[0];
  const m = choice?.message;
  const state = finishStatus(choice?.finish_reason);
  const output: Obj[] = [];
  if (m) {
    const details = m.reasoning_details ?? [];
    if (m.reasoning || details.length > 0) {
      const item: Obj = {
        id: itemId(head, 'rs', output.length),
        type: 'reasoning',
        summary: m.reasoning ? [{ type: 'summary_text', text: m.reasoning }] : [],
      };
      if (head.echo.encryptedReasoning && details.length > 0) item.encrypted_content = wrapReasoning(details);
      output.push(item);
    }
    const text = (m.content ?? '') || (m.refusal ?? '');
    if (text)
      output.push({
        id: itemId(head, 'msg', output.length),
        type: 'message',
        status: state.status === 'completed' ? 'completed' : 'incomplete',
        role: 'assistant',
        content: [textPart(text)],
      });
    const calls = m.tool_calls ?? [];
    calls.forEach((call, i) => {
      const custom = head.echo.customTools.has(call.function.name);
      const id = itemId(head, custom ? 'ctc' : 'fc', output.length);
      const item: Obj = {
        id,
        type: custom ? 'custom_tool_call' : 'function_call',
        status: callStatus(choice?.finish_reason, call.function.arguments, i === calls.length - 1),
        // As in streams: an upstream that gave no id still gets the call a call_id to answer.
        call_id: call.id || `call_${id.slice(id.indexOf('_') + 1)}`,
        name: call.function.name,
      };
      if (custom) item.input = customInput(call.function.arguments);
      else item.arguments = call.function.arguments;
      output.push(item);
    });
  }
  return JSON.stringify(responseObject(head, state, output, responsesUsage(usage)));
}

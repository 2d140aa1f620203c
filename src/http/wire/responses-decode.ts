/**
 * OpenAI Responses request (`POST /v1/responses`, schema in responses-request-schema.ts) -> the
 * canonical chat request, so it runs through the same pipeline as /v1/chat/completions. Stateless:
 * the gateway stores no response, so what would read one is refused (docs/responses-ingress.md).
 *
 * - `instructions` -> a system message first; `input` string -> one user message.
 * - Items: `message` (also without `type`, as the SDK's EasyInputMessage) with role user / system
 *   / developer / assistant, content a string or parts (`input_text`, `input_image` by URL,
 *   `input_file` by data or URL; `output_text` and `refusal` for the assistant's);
 *   `function_call` -> the assistant's `tool_calls` (call_id as the id); `function_call_output`
 *   -> a `tool` message; `custom_tool_call` / `custom_tool_call_output` the same, the call's
 *   `input` as the arguments `{"input": ...}`; `reasoning` -> the assistant's `reasoning`
 *   (summary text) and, from an `encrypted_content` this gateway wrote, its `reasoning_details`
 *   back as they were (the pieces of one detail in two reasoning items of a turn joined again).
 *   Consecutive assistant-side items (reasoning, assistant message, function calls) make one
 *   assistant message, as the chat form has them.
 * - `tools`: function tools -> functions; freeform `custom` tools -> functions taking
 *   `{input: string}` (customFunction); `tool_choice` -> the chat form (custom as function);
 *   `max_output_tokens` -> `max_tokens`; `reasoning.effort` -> `reasoning.effort`;
 *   `text.format` -> `response_format`; `text.verbosity` -> `verbosity`.
 */

import { imageDataUrlFault } from '../../gateway/chat/image-urls.js';
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  ReasoningDetail,
  ToolCall,
  ToolDefinition,
} from '../../gateway/chat/types.js';
import { badRequest } from '../../gateway/errors.js';
import { checkToolNames } from './chat-request-check.js';
import { joinDetails, unwrapReasoning } from './responses-reasoning.js';

type Item = Record<string, any>;

export interface ResponsesRequestBody {
  model?: string;
  input?: string | Item[];
  instructions?: string;
  tools?: Item[];
  tool_choice?: string | Item;
  parallel_tool_calls?: boolean;
  max_output_tokens?: number;
  temperature?: number;
  top_p?: number;
  reasoning?: { effort?: string; summary?: string };
  text?: { format?: Item; verbosity?: string };
  metadata?: Record<string, string>;
  user?: string;
  safety_identifier?: string;
  stream?: boolean;
  store?: boolean;
  include?: string[];
  previous_response_id?: string;
  conversation?: unknown;
  background?: boolean;
  prompt?: unknown;
  models?: string[];
  provider?: Record<string, unknown>;
  [extra: string]: unknown;
}

const STATELESS = 'this gateway stores no responses or conversations; send the whole conversation in input';

/**
 * `origins`, when given, gets where each message of the chat request came from, by index: the
 * path of its text in the body (`instructions`, `input`, `input.N.content`, `input.N.output` of a
 * tool output) or its item (`input.N`, the first item of an assistant turn). An error that names
 * a chat message (`messages.3.content`, an adapter's) is named as this client sent it
 * (`responsesParam`).
 */
export function decodeResponsesRequest(body: ResponsesRequestBody, origins: string[] = []): ChatRequest {
  if (body.previous_response_id !== undefined)
    throw badRequest(`previous_response_id: not supported: ${STATELESS}`, 'previous_response_id');
  if (body.conversation !== undefined)
    throw badRequest(`conversation: not supported: ${STATELESS}`, 'conversation');
  if (body.background === true)
    throw badRequest(`background: not supported: ${STATELESS}; stream instead`, 'background');
  if (body.prompt !== undefined)
    throw badRequest(
      'prompt: stored prompt templates are not supported; send instructions and input',
      'prompt',
    );
  if (body.input === undefined) throw badRequest('input: is required', 'input');

  const messages: ChatMessage[] = [];
  if (body.instructions) {
    messages.push({ role: 'system', content: body.instructions });
    origins.push('instructions');
  }
  if (typeof body.input === 'string') {
    messages.push({ role: 'user', content: body.input });
    origins.push('input');
  } else inputItems(body.input, messages, origins);
  if (messages.length === 0) throw badRequest('input: must hold at least one item', 'input');

  const req: ChatRequest = { messages };
  if (body.model !== undefined) req.model = body.model;
  if (body.stream === true) req.stream = true;
  if (body.max_output_tokens !== undefined) req.max_tokens = body.max_output_tokens;
  if (body.temperature !== undefined) req.temperature = body.temperature;
  if (body.top_p !== undefined) req.top_p = body.top_p;
  if (body.user !== undefined) req.user = body.user;
  if (body.safety_identifier !== undefined) req.safety_identifier = body.safety_identifier;
  if (body.metadata !== undefined) req.metadata = body.metadata;
  if (body.models?.length) req.models = body.models;
  if (body.provider !== undefined) req.provider = body.provider;
  if (body.reasoning?.effort) req.reasoning = { effort: body.reasoning.effort as never };
  if (body.text?.verbosity) req.verbosity = body.text.verbosity;
  const format = body.text?.format;
  if (format?.type === 'json_object') req.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema') {
    const json_schema: Item = { name: format.name, schema: format.schema };
    if (typeof format.description === 'string') json_schema.description = format.description;
    if (typeof format.strict === 'boolean') json_schema.strict = format.strict;
    req.response_format = { type: 'json_schema', json_schema: json_schema as never };
  }
  const tools = (body.tools ?? []).map(functionTool);
  if (tools.length > 0) {
    req.tools = tools;
    if (body.parallel_tool_calls !== undefined) req.parallel_tool_calls = body.parallel_tool_calls;
  }
  toolChoice(body.tool_choice, tools.length > 0, req);
  // Names are unique and a named choice names one of them, as chat checks them (OpenAI and
  // Anthropic refuse a repeat, after an attempt; Anthropic and Gemini would be asked for a tool
  // they were not given; and the answer tells a custom tool's calls by its name).
  const problem = checkToolNames(req as unknown as Record<string, unknown>);
  if (problem) {
    const param = toolParam(problem.path);
    throw badRequest(`${param}: ${problem.message}`, param);
  }
  return req;
}

/**
 * A chat request's field, as this client sent it (`origins` from decodeResponsesRequest):
 * `messages.N.content...` is that message's text or parts in the body (`input.2.content.1`,
 * `input`, `instructions`), `messages.N` its item, and an image's `image_url.url` its `image_url`
 * (a string here). Undefined for any other field, or a message the body did not give.
 */
export function responsesParam(param: string, origins: readonly string[]): string | undefined {
  const m = /^messages\.(\d+)(?:\.content(.*))?$/.exec(param);
  const origin = m ? origins[Number(m[1])] : undefined;
  if (!m || origin === undefined) return undefined;
  // Instructions, or input as a string: text, no parts.
  if (!origin.startsWith('input.')) return origin;
  const item = origin.replace(/\.(?:content|output)$/, '');
  // The item itself; or an assistant turn, whose items' text was joined.
  if (m[2] === undefined || item === origin) return item;
  // A message's or tool output's parts map one to one.
  return `${origin}${m[2].replace(/\.image_url\.url$/, '.image_url')}`;
}

/** The names of the request's freeform `custom` tools (functions upstream, custom in the answer). */
export function customToolNames(body: ResponsesRequestBody): Set<string> {
  const names = new Set<string>();
  for (const t of body.tools ?? []) if (t?.type === 'custom' && typeof t.name === 'string') names.add(t.name);
  return names;
}

function inputItems(items: Item[], out: ChatMessage[], origins: string[]): void {
  /** The assistant message the next assistant-side item joins (one made here, not yet followed). */
  let turn: ChatMessage | undefined;
  const assistant = (at: string): ChatMessage => {
    if (!turn) {
      turn = { role: 'assistant', content: null };
      out.push(turn);
      origins.push(at);
    }
    return turn;
  };
  /**
   * Ends the assistant turn. One that got neither text nor calls (only reasoning: a turn the user
   * cut short, an answer cut during its reasoning) is left out: an assistant message with neither
   * is refused by OpenAI-compatible upstreams. It is the last message at this point.
   */
  const endTurn = () => {
    if (turn && turn.content === null && !turn.tool_calls?.length) {
      out.pop();
      origins.pop();
    }
    turn = undefined;
  };
  items.forEach((item, i) => {
    const at = `input.${i}`;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        if (item.role === 'assistant') {
          const text = assistantText(item.content, `${at}.content`);
          const m = assistant(at);
          if (text) m.content = `${(m.content as string | null) ?? ''}${text}`;
          return;
        }
        if (item.role !== 'user' && item.role !== 'system' && item.role !== 'developer')
          throw badRequest(`${at}.role: must be one of user, assistant, system, developer`, `${at}.role`);
        endTurn();
        out.push({ role: item.role, content: userContent(item.content, `${at}.content`) });
        origins.push(`${at}.content`);
        return;
      }
      case 'function_call':
      case 'custom_tool_call': {
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string')
          throw badRequest(`${at}: ${type} needs a call_id and a name`, at);
        // A custom tool is a function taking {input} upstream (customFunction): its call is that.
        // A function_call's arguments are a string (the schema's InputItem).
        if (type === 'custom_tool_call' && typeof item.input !== 'string')
          throw badRequest(`${at}.input: must be a string`, `${at}.input`);
        const args =
          type === 'custom_tool_call' ? JSON.stringify({ input: item.input }) : (item.arguments as string);
        const call: ToolCall = {
          id: item.call_id,
          type: 'function',
          function: { name: item.name, arguments: args },
        };
        const m = assistant(at);
        m.tool_calls = [...(m.tool_calls ?? []), call];
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        if (typeof item.call_id !== 'string') throw badRequest(`${at}.call_id: is required`, `${at}.call_id`);
        endTurn();
        const content =
          typeof item.output === 'string' ? item.output : userContent(item.output, `${at}.output`);
        out.push({ role: 'tool', tool_call_id: item.call_id, content });
        origins.push(`${at}.output`);
        return;
      }
      case 'reasoning': {
        const m = assistant(at);
        const summary = Array.isArray(item.summary)
          ? item.summary
              .map((s: Item, k: number) => {
                if (typeof s?.text !== 'string')
                  throw badRequest(`${at}.summary.${k}.text: must be a string`, `${at}.summary.${k}.text`);
                return s.text;
              })
              .join('')
          : '';
        if (summary) m.reasoning = (m.reasoning ?? '') + summary;
        const details: ReasoningDetail[] | undefined = unwrapReasoning(item.encrypted_content);
        if (details?.length) m.reasoning_details = joinDetails(m.reasoning_details, details);
        return;
      }
      case undefined:
        throw badRequest(
          `${at}.type: is required (a message may give its role instead: {"role": "user", "content": ...})`,
          `${at}.type`,
        );
      case 'item_reference':
        throw badRequest(`${at}.type: item_reference is not supported: ${STATELESS}`, `${at}.type`);
      default:
        throw badRequest(
          `${at}.type: input item type "${String(type)}" is not supported by this gateway`,
          `${at}.type`,
        );
    }
  });
  endTurn();
}

function assistantText(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${at}: must be a string or an array of parts`, at);
  return content
    .map((p: Item, j) => {
      // A string (the schema's InputItem).
      if (p?.type === 'output_text' || p?.type === 'input_text') return p.text as string;
      if (p?.type === 'refusal') {
        if (typeof p.refusal !== 'string')
          throw badRequest(`${at}.${j}.refusal: must be a string`, `${at}.${j}.refusal`);
        return p.refusal;
      }
      throw unsupportedPart(p, `${at}.${j}`);
    })
    .join('');
}

/** OpenAI's `ResponseInputImage.detail` values, the four chat's image_url takes too. */
const IMAGE_DETAILS: readonly unknown[] = ['low', 'high', 'auto', 'original'];

function userContent(content: unknown, at: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${at}: must be a string or an array of parts`, at);
  return content.map((p: Item, j): ContentPart => {
    const where = `${at}.${j}`;
    switch (p?.type) {
      case 'input_text':
        return { type: 'text', text: p.text };
      case 'input_image': {
        if (typeof p.image_url !== 'string' || p.image_url === '')
          throw badRequest(
            `${where}: only images given by image_url (a URL or a data URL) are supported; file_id needs the Files API, which this gateway does not have`,
            `${where}.image_url`,
          );
        // As the plan checks a chat request's, but named as this client sent it (the plan would
        // name messages.N.content.M.image_url.url, the index shifted by instructions).
        const fault = imageDataUrlFault(p.image_url, 'an input_file part');
        if (fault !== undefined) throw badRequest(`${where}.image_url: ${fault}`, `${where}.image_url`);
        const image_url: { url: string; detail?: string } = { url: p.image_url };
        if (p.detail != null) {
          // As chat refuses an image_url detail: anything else passes one upstream and fails another.
          if (!IMAGE_DETAILS.includes(p.detail))
            throw badRequest(
              `${where}.detail: must be one of ${IMAGE_DETAILS.join(', ')}`,
              `${where}.detail`,
            );
          image_url.detail = p.detail;
        }
        return { type: 'image_url', image_url };
      }
      case 'input_file': {
        const data = typeof p.file_data === 'string' ? p.file_data : p.file_url;
        if (typeof data !== 'string' || data === '')
          throw badRequest(
            `${where}: only files given by file_data or file_url are supported; file_id needs the Files API, which this gateway does not have`,
            `${where}.file_data`,
          );
        const file: { filename?: string; file_data: string } = { file_data: data };
        if (typeof p.filename === 'string') file.filename = p.filename;
        return { type: 'file', file };
      }
      default:
        throw unsupportedPart(p, where);
    }
  });
}

function unsupportedPart(p: Item | undefined, at: string) {
  const type = typeof p?.type === 'string' ? p.type : typeof p;
  return badRequest(`${at}.type: content part type "${type}" is not supported here`, `${at}.type`);
}

/** How much of a custom tool's grammar goes into the function's description. */
const GRAMMAR_MAX = 8000;

/** The parameters of the function a custom tool becomes: its free-text input as one string. */
const customParameters = () => ({
  type: 'object',
  properties: { input: { type: 'string' } },
  required: ['input'],
  additionalProperties: false,
});

/**
 * A freeform `custom` tool (Codex's apply_patch) -> a function taking `{input: string}`, as chat
 * upstreams have no freeform tools. Its grammar, which no upstream enforces then, is told to the
 * model in the description. The answer turns calls of it back into `custom_tool_call` items.
 */
function customFunction(t: Item, at: string): ToolDefinition {
  const fn: ToolDefinition['function'] = { name: t.name, parameters: customParameters() };
  const notes: string[] = [];
  if (typeof t.description === 'string' && t.description) notes.push(t.description);
  const format = t.format;
  if (format != null && format.type === 'grammar') {
    if (typeof format.definition !== 'string' || typeof format.syntax !== 'string')
      throw badRequest(`${at}.format: a grammar needs a syntax and a definition`, `${at}.format`);
    const definition =
      format.definition.length > GRAMMAR_MAX
        ? `${format.definition.slice(0, GRAMMAR_MAX)}\n... (grammar truncated)`
        : format.definition;
    notes.push(`Input: free text following this ${format.syntax} grammar:\n${definition}`);
  } else if (format != null && format.type !== 'text')
    throw badRequest(`${at}.format.type: must be text or grammar`, `${at}.format.type`);
  if (notes.length > 0) fn.description = notes.join('\n\n');
  return { type: 'function', function: fn };
}

function functionTool(t: Item, i: number): ToolDefinition {
  const at = `tools.${i}`;
  if (t.type !== 'function' && t.type !== 'custom')
    throw badRequest(
      `${at}.type: built-in tool "${t.type}" is not supported by this gateway; only function and custom tools are`,
      `${at}.type`,
    );
  if (typeof t.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(t.name))
    throw badRequest(`${at}.name: must be 1 to 64 letters, digits, _ or -`, `${at}.name`);
  if (t.type === 'custom') return customFunction(t, at);
  const fn: ToolDefinition['function'] = { name: t.name };
  if (typeof t.description === 'string') fn.description = t.description;
  // A JSON Schema object, or null (not given), as chat takes it: an array reached Anthropic as
  // `{"0": ..., "type": "object"}`, and a string was dropped, the function sent without parameters.
  if (t.parameters != null && (typeof t.parameters !== 'object' || Array.isArray(t.parameters)))
    throw badRequest(`${at}.parameters: must be an object (a JSON Schema)`, `${at}.parameters`);
  if (t.parameters != null) fn.parameters = t.parameters;
  if (typeof t.strict === 'boolean') fn.strict = t.strict;
  return { type: 'function', function: fn };
}

/**
 * A path in the chat request's tools, as this client sent it: a tool's or the choice's name is
 * `name` beside its `type` (`tools.2.name`, `tool_choice.name`), not under `function`.
 */
function toolParam(path: readonly (string | number)[]): string {
  return path.join('.').replace(/\.function\.name$/, '.name');
}

/** `hasTools`: the request declares tools (a named choice's name is checked against them after). */
function toolChoice(tc: ResponsesRequestBody['tool_choice'], hasTools: boolean, req: ChatRequest): void {
  if (tc === undefined) return;
  // As with chat: none / auto without tools mean nothing (OpenAI-compatible upstreams refuse them).
  if (!hasTools && (tc === 'none' || tc === 'auto')) return;
  if (typeof tc === 'string') {
    req.tool_choice = tc as 'none' | 'auto' | 'required';
    return;
  }
  // A custom tool is a function upstream (customFunction). With no tools at all, the plan refuses
  // the choice (a tool is required).
  if ((tc.type === 'function' || tc.type === 'custom') && typeof tc.name === 'string') {
    req.tool_choice = { type: 'function', function: { name: tc.name } };
    return;
  }
  throw badRequest(
    `tool_choice: type "${tc.type}" is not supported by this gateway; use auto, none, required, {type: "function", name} or {type: "custom", name}`,
    'tool_choice',
  );
}

import { randomBytes } from 'node:crypto';
import type { ChatRequest, ToolCall, ToolDefinition } from '../../gateway/chat/types.js';

/**
 * Tools for upstreams that only know functions (Anthropic, Gemini). The schema lets through what
 * OpenAI accepts, which includes custom tools, custom tool calls and `allowed_tools` choices;
 * these have no equivalent there, so like other unsupported parameters they are dropped, and an
 * allow-list narrows the tools sent instead.
 */
export interface FunctionTools {
  tools: ToolDefinition[];
  /** 'tool' forces `name`. */
  choice: 'none' | 'auto' | 'required' | 'tool' | undefined;
  name?: string;
}

export function functionTools(req: ChatRequest): FunctionTools {
  let tools = (req.tools ?? []).filter((t) => t.type === 'function' && t.function);
  const tc = req.tool_choice as unknown;
  if (tc === 'none' || tc === 'auto' || tc === 'required') return { tools, choice: tc };
  if (tc && typeof tc === 'object') {
    const o = tc as {
      type?: string;
      function?: { name?: string };
      allowed_tools?: { mode?: string; tools?: { function?: { name?: string } }[] };
    };
    if (o.type === 'function' && typeof o.function?.name === 'string')
      return { tools, choice: 'tool', name: o.function.name };
    if (o.type === 'allowed_tools' && o.allowed_tools) {
      const allowed = new Set((o.allowed_tools.tools ?? []).map((t) => t.function?.name));
      tools = tools.filter((t) => allowed.has(t.function.name));
      return { tools, choice: o.allowed_tools.mode === 'required' ? 'required' : 'auto' };
    }
  }
  return { tools, choice: undefined };
}

/** The function calls of an assistant turn (custom tool calls have no function to replay). */
export function functionCalls(calls: ToolCall[] | undefined): ToolCall[] {
  return calls ? calls.filter((c) => c.function && typeof c.function.name === 'string') : [];
}

/** Tool call arguments as an object: OpenAI sends a JSON string; some clients send the object. */
export function argumentsObject(args: unknown): Record<string, unknown> {
  let v = args;
  if (typeof args === 'string') {
    if (args.trim() === '') return {};
    try {
      v = JSON.parse(args);
    } catch {
      return {};
    }
  }
  if (v === undefined || v === null) return {};
  return typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}

/**
 * The id given to a tool call an upstream returned without one (Gemini's `functionCall.id` is
 * optional; some OpenAI-compatible servers leave `id` out): clients answer a call by its id.
 */
export const newCallId = () => `call_${randomBytes(12).toString('hex')}`;

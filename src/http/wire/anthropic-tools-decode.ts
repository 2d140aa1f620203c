/**
 * An Anthropic Messages request's `tools` and `tool_choice` -> the canonical chat request's.
 *
 * - Custom tools (with `input_schema`) -> functions (`cache_control` and the fields the chat tool
 *   has no name for ride hidden, for an Anthropic upstream). Anthropic-defined tools (a `type`
 *   other than "custom": server tools such as `web_search_...`, schema-less client tools such as
 *   `bash_...`, `text_editor_...`) have no canonical form: they ride hidden (`anthropic_tools`,
 *   with their place among the custom tools) to an Anthropic upstream, unchanged, and reach no other.
 * - tool_choice auto/any/tool/none -> auto/required/function/none; `disable_parallel_tool_use` ->
 *   `parallel_tool_calls: false`. A choice the chat request cannot say (it names an
 *   Anthropic-defined tool, or only such tools were sent) rides hidden as it is
 *   (`anthropic_tool_choice`). A choice with no tools at all is dropped (`none`/`auto`) or refused.
 */
import { setHidden } from '../../gateway/chat/hidden.js';
import type { AnthropicDefinedTool, ChatRequest, ToolDefinition } from '../../gateway/chat/types.js';
import { badRequest } from '../../gateway/errors.js';
import { hiddenCache } from './anthropic-content-decode.js';

type Block = Record<string, any> & { type: string };

/** Anthropic's `tool_choice`. */
export interface AnthropicToolChoice {
  type: string;
  name?: string;
  disable_parallel_tool_use?: boolean;
}

/**
 * Custom tools (no `type`, or "custom") as functions; the Anthropic-defined ones (any other
 * `type`) as they are, each with the number of custom tools before it.
 */
export function splitTools(tools: Array<Record<string, any>>): {
  functions: ToolDefinition[];
  defined: AnthropicDefinedTool[];
} {
  const functions: ToolDefinition[] = [];
  const defined: AnthropicDefinedTool[] = [];
  for (const [i, t] of tools.entries()) {
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      defined.push({ at: functions.length, tool: t });
      continue;
    }
    const fn: ToolDefinition['function'] = { name: t.name };
    if (typeof t.description === 'string') fn.description = t.description;
    if (t.input_schema && typeof t.input_schema === 'object' && !Array.isArray(t.input_schema))
      fn.parameters = t.input_schema;
    // Anthropic refuses any other; left out, the model was offered the tool without its schema.
    else if (t.input_schema != null)
      throw badRequest(
        `tools.${i}.input_schema: must be an object (a JSON Schema)`,
        `tools.${i}.input_schema`,
      );
    const tool = hiddenCache<ToolDefinition>({ type: 'function', function: fn }, t as Block);
    // What the chat tool has no field for goes back on the tool for an Anthropic upstream.
    const { type: _t, name: _n, description: _d, input_schema: _s, cache_control: _c, ...rest } = t;
    if (Object.keys(rest).length > 0) setHidden(tool, 'anthropic_fields', rest);
    functions.push(tool);
  }
  return { functions, defined };
}

export function toolChoice(
  tc: AnthropicToolChoice | undefined,
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

import { isPlainObject as isObj } from '../../gateway/plain-object.js';
import type { BodyProblem } from '../validation.js';

/**
 * What runs on a chat request body the schema (chat-request-schema.ts) accepted, inside the same
 * validator (`prepareBody`): the rules that read one member against another, and OpenRouter's
 * server tools and plugins, which no upstream translation carries. A problem is the 400 naming
 * the field, before anything is planned or sent (decisions.md: a 400 for bad input, never a
 * mistranslation to the upstream). OpenRouter's `context-compression` plugin becomes
 * `transforms: ["middle-out"]` here, so everything after (the quota estimate, the plan) reads
 * one field.
 */
export function checkChatBody(body: unknown): BodyProblem | undefined {
  const b = body as Record<string, unknown>;
  return checkToolNames(b) ?? checkPlugins(b);
}

/**
 * The tools' names against each other and the named `tool_choice` against them, and server
 * tools refused: over a chat body, or a chat request decoded from another wire
 * (responses-decode.ts), whose caller renames the problem's path to the field its client sent.
 */
export function checkToolNames(b: Record<string, unknown>): BodyProblem | undefined {
  return checkTools(b) ?? checkToolChoice(b);
}

type Obj = Record<string, unknown>;

/** A function tool (no type, or type "function"); the schema has checked its `function.name`. */
const isFunction = (t: Obj) => t.type === undefined || t.type === 'function';

const WEB_SEARCH = /^(?:openrouter:web_search|web_search(?:_preview)?(?:_[0-9]{4}_[0-9]{2}_[0-9]{2})?)$/;
const NOT_THERE = 'an answer without it would look like one with it';

/**
 * Why a tool `type` is refused, or undefined. OpenRouter runs its server tools itself
 * (openrouter.md §2.3): Anthropic and Gemini adapters dropped them and OpenAI-compatible servers
 * got them as sent, so the answer came back without the search the client asked for. Web search
 * is refused as the `:online` variant is (model-variant.ts).
 */
function serverTool(type: string): string | undefined {
  if (WEB_SEARCH.test(type))
    return `${JSON.stringify(type)} is a web search server tool: web search is not available on this gateway, and ${NOT_THERE}`;
  if (type === 'openrouter:web_fetch')
    return `${JSON.stringify(type)} is a server tool that fetches web pages: fetching the web is not available on this gateway, and ${NOT_THERE}`;
  if (type.startsWith('openrouter:'))
    return `${JSON.stringify(type)} is an OpenRouter server tool, which this gateway does not run (function tools are served)`;
  return undefined;
}

/** Server tools are refused; function tools' names are unique (OpenAI and Anthropic refuse a repeat). */
function checkTools(b: Obj): BodyProblem | undefined {
  if (!Array.isArray(b.tools)) return undefined;
  const seen = new Map<string, number>();
  for (const [i, t] of (b.tools as Obj[]).entries()) {
    if (typeof t.type === 'string') {
      const refused = serverTool(t.type);
      if (refused) return { path: ['tools', i, 'type'], message: refused };
    }
    if (!isFunction(t)) continue;
    const name = (t.function as Obj).name as string;
    const first = seen.get(name);
    if (first !== undefined)
      return {
        path: ['tools', i, 'function', 'name'],
        message: `${JSON.stringify(name)} is already the name of tools.${first}; tool names must be unique`,
      };
    seen.set(name, i);
  }
  return undefined;
}

/**
 * A named `tool_choice` names a declared function tool: Anthropic and Gemini would be asked for a
 * tool they were not given. (With no tools at all, planChat refuses the choice.) A server tool's
 * choice is refused as the tool is.
 */
function checkToolChoice(b: Obj): BodyProblem | undefined {
  const choice = b.tool_choice;
  if (!isObj(choice)) return undefined;
  if (typeof choice.type === 'string') {
    const refused = serverTool(choice.type);
    if (refused) return { path: ['tool_choice', 'type'], message: refused };
  }
  if (!isFunction(choice) || !Array.isArray(b.tools) || b.tools.length === 0) return undefined;
  const name = (choice.function as Obj).name as string;
  const declared = (b.tools as Obj[]).some((t) => isFunction(t) && (t.function as Obj).name === name);
  if (declared) return undefined;
  return {
    path: ['tool_choice', 'function', 'name'],
    message: `${JSON.stringify(name)} is not the name of a tool in tools`,
  };
}

/**
 * OpenRouter's plugin ids (openrouter.md §7) this gateway refuses, and why: each changes the
 * answer in a way the gateway cannot, and an answer without it looks like one with it.
 */
const REFUSED_PLUGINS: Record<string, string> = {
  web: `web search is not available on this gateway, and ${NOT_THERE}`,
  'web-fetch': `fetching web pages is not available on this gateway, and ${NOT_THERE}`,
  moderation: 'content moderation is not available on this gateway',
  'auto-router':
    "OpenRouter's model auto-routing is not available on this gateway; name the model, or list fallbacks in models",
  'pareto-router':
    "OpenRouter's model auto-routing is not available on this gateway; name the model, or list fallbacks in models",
  fusion: 'fusing answers of several models is not available on this gateway',
};
/**
 * Plugin ids served without changing the request: `file-parser` (files reach the upstream as
 * sent, the `native` engine's way; an upstream that cannot read one refuses it) and
 * `response-healing` (answers come as the model gave them: a JSON answer it broke is seen broken,
 * not taken for a repaired one). `context-compression` is middle-out.
 */
const ACCEPTED_PLUGINS = ['context-compression', 'file-parser', 'response-healing'];

/**
 * OpenRouter's plugins: `context-compression` (its `engine` is `middle-out`, the only one) is
 * `transforms: ["middle-out"]`, `enabled: false` turning it off (a contradiction with transforms
 * is refused); a plugin turned off changes nothing; the rest per the lists above, an unknown id
 * refused rather than silently not run.
 */
function checkPlugins(b: Obj): BodyProblem | undefined {
  if (!Array.isArray(b.plugins)) return undefined;
  let compress: boolean | undefined;
  for (const [i, p] of (b.plugins as Obj[]).entries()) {
    const id = p.id as string;
    if (id === 'context-compression') {
      if (p.engine !== undefined && p.engine !== 'middle-out')
        return {
          path: ['plugins', i, 'engine'],
          message: 'must be "middle-out" (the engine of context-compression this gateway runs)',
        };
      const on = p.enabled !== false;
      if (compress !== undefined && compress !== on)
        return {
          path: ['plugins', i, 'enabled'],
          message: 'contradicts an earlier context-compression plugin',
        };
      compress = on;
      continue;
    }
    if (p.enabled === false || ACCEPTED_PLUGINS.includes(id)) continue;
    const why = REFUSED_PLUGINS[id];
    return {
      path: ['plugins', i, 'id'],
      message: why
        ? `the ${JSON.stringify(id)} plugin is refused: ${why}`
        : `unknown plugin ${JSON.stringify(id)}; this gateway takes ${ACCEPTED_PLUGINS.join(', ')}`,
    };
  }
  if (compress === undefined) return undefined;
  const transforms = (b.transforms as string[] | undefined) ?? [];
  const asked = transforms.includes('middle-out');
  if (compress && !asked) b.transforms = [...transforms, 'middle-out'];
  if (!compress && asked) {
    const i = (b.plugins as Obj[]).findIndex((p) => p.id === 'context-compression');
    return { path: ['plugins', i, 'enabled'], message: 'false contradicts transforms: ["middle-out"]' };
  }
  return undefined;
}

/**
 * Canonical request -> Gemini `generateContent` / `streamGenerateContent?alt=sse`
 * (`{base}/v1beta/models/{model}:...`, key in `x-goog-api-key`).
 *
 * generationConfig: temperature, top_p -> topP, top_k -> topK, max_tokens -> maxOutputTokens (at
 * most the model's output limit, `target.maxOutputTokens`, when the registry knows it),
 * stop -> stopSequences (empty strings and an empty list left out), n -> candidateCount,
 * presence/frequency penalties (Gemini 1.x and 2.0 only: `takesPenalties`), seed (its low 32
 * bits: Gemini's is an int32, see geminiSeed),
 * response_format -> responseMimeType + responseJsonSchema (JSON Schema as OpenAI clients write
 * it; the older `responseSchema` takes only an OpenAPI subset and rejects e.g.
 * additionalProperties). Tools use `parametersJsonSchema` for the same reason.
 * Dropped: logit_bias, logprobs, min_p, repetition_penalty, user.
 *
 * thinkingConfig from `reasoning`: Gemini 3 models (name rule `gemini-3`, or `extra.thinkingLevel:
 * true`) get `thinkingLevel` from the effort (xhigh/max -> high; within what the model takes, see
 * `thinkingLevel`); others get `thinkingBudget` =
 * reasoning.max_tokens or effort ratio x max_tokens (x 8192 when max_tokens is absent), kept in the
 * range the Gemini 2.5 model accepts; off -> budget 0 (2.5 Pro, which cannot turn thinking off: 128;
 * Gemini 3, which cannot either: its lowest level).
 * `includeThoughts` is true unless `reasoning.exclude`. Models without thinking (before 2.5, Gemma;
 * `takesThinking`, or the channel setting `thinking: true|false`) get no thinkingConfig at all.
 * Target option `extra.apiVersion` (default v1beta).
 */
import { sentMaxTokens } from '../../gateway/chat/max-tokens.js';
import { reasoningBudget, resolveReasoning } from '../../gateway/chat/reasoning.js';
import type { ChatRequest } from '../../gateway/chat/types.js';
import { joinUrl } from '../shared/media.js';
import { functionTools } from '../shared/tools.js';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.js';
import { toGeminiContents } from './gemini-contents.js';

export const GEMINI_PARAMS: ReadonlySet<string> = new Set([
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'response_format',
  // A flag, not a field: honoured by sending a json_schema response_format as responseJsonSchema.
  'structured_outputs',
  'tools',
  'tool_choice',
  'reasoning',
  'reasoning_effort',
]);

const BUDGET_BASE = 8192;

/**
 * Models from before thinking: Gemini 1.x and 2.0 (but the 2.0 Flash Thinking experiments), the
 * 1.0 names `gemini-pro` and `gemini-pro-vision`, and Gemma. They answer any `thinkingConfig`,
 * a budget of 0 included, with 400 "thinking_config is not supported.".
 */
const BEFORE_THINKING = /(?:^|\/)(?:gemini-(?:1\.\d|2\.0)(?!.*thinking)|gemini-pro(?:-vision)?$|gemma-)/i;

/**
 * Whether the model takes `thinkingConfig`: Gemini 2.5 and later, and any name the rule does not
 * know. The channel setting `thinking: true|false` overrides it (a proxy's own model names).
 */
export function takesThinking(model: string, extra?: Record<string, unknown>): boolean {
  if (typeof extra?.thinking === 'boolean') return extra.thinking;
  return !BEFORE_THINKING.test(model);
}

/**
 * Models that take `presencePenalty` and `frequencyPenalty`: Gemini 1.x and 2.0 (and the 1.0
 * names). Gemini 2.5 and 3 answer either with 400 "Penalty is not enabled for
 * models/gemini-2.5-flash", as did experimental models (`gemini-exp-1206`), so a name the rule
 * does not know gets none: a penalty left out changes sampling a little, a 400 fails the request.
 */
const TAKES_PENALTIES = /(?:^|\/)(?:gemini-(?:1\.\d|2\.0)|gemini-pro(?:-vision)?$)/i;

/** Whether the model takes the penalties; the channel setting `penalties: true|false` overrides the name rule. */
export function takesPenalties(model: string, extra?: Record<string, unknown>): boolean {
  if (typeof extra?.penalties === 'boolean') return extra.penalties;
  return TAKES_PENALTIES.test(model);
}

/**
 * The thinkingBudget each Gemini 2.5 model accepts (Gemini API thinking docs); a value outside is
 * a 400. 2.5 Pro cannot turn thinking off: its lowest budget, 128, is the nearest to "off".
 */
function budgetRange(model: string): { min: number; max: number; off: number } | undefined {
  if (/gemini-2\.5-pro/i.test(model)) return { min: 128, max: 32_768, off: 128 };
  if (/gemini-2\.5-flash-lite/i.test(model)) return { min: 512, max: 24_576, off: 0 };
  if (/gemini-2\.5-flash/i.test(model)) return { min: 1, max: 24_576, off: 0 };
  return undefined;
}

/**
 * The thinkingLevel for an effort. Gemini 3 Pro models have no `minimal` (-> low), and Gemini 3 Pro
 * (3.0) only low and high: it answers 400 "Thinking level MEDIUM is not supported for this model",
 * so medium goes up to high, its default. Flash models take all four.
 */
function thinkingLevel(effort: string, model: string): string {
  if (effort === 'xhigh' || effort === 'max') return 'high';
  if (/gemini-3(\.\d+)?-pro/i.test(model)) {
    if (effort === 'minimal') return 'low';
    if (effort === 'medium' && /gemini-3-pro/i.test(model)) return 'high';
  }
  return effort;
}

/**
 * Gemini's `seed` is an int32 and a larger one is a 400 ("Invalid value at
 * 'generation_config.seed' (TYPE_INT32)"), while OpenAI clients may send any safe integer (often a
 * random 64-bit-ish one). Its low 32 bits, read as a signed int32 (two's complement), are sent: a
 * seed within int32 is unchanged, and one seed always maps to the same Gemini seed, so repeating
 * a request repeats its sampling as well as Gemini does. (Seeds 2^32 apart map alike.)
 */
export function geminiSeed(seed: number): number {
  return seed | 0;
}

export function geminiUrl(target: UpstreamTarget, path: string): string {
  const version = typeof target.extra?.apiVersion === 'string' ? target.extra.apiVersion : 'v1beta';
  const base = /\/v1(beta\d*)?\/?$/.test(target.baseUrl) ? target.baseUrl : joinUrl(target.baseUrl, version);
  return joinUrl(base, path);
}

export function geminiHeaders(target: UpstreamTarget, accept: string): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept,
    'x-goog-api-key': target.apiKey,
  };
  return target.headers ? Object.assign(h, target.headers) : h;
}

export function buildGeminiRequest(
  req: ChatRequest,
  target: UpstreamTarget,
  opts: { stream: boolean },
): UpstreamHttpRequest {
  const levelModel =
    typeof target.extra?.thinkingLevel === 'boolean'
      ? target.extra.thinkingLevel
      : /gemini-3/i.test(target.upstreamModel);
  const body: Record<string, unknown> = toGeminiContents(req.messages, { skipSignatureCheck: levelModel });
  const gen: Record<string, unknown> = {};
  // Gemini refuses a maxOutputTokens above the model's limit (400 "... maxOutputTokens value of N
  // but the supported range is from 1 (inclusive) to M (exclusive)"), and the answer cannot be
  // longer anyway: the limit is sent instead, when the registry knows it (`target.maxOutputTokens`).
  const maxTokens = sentMaxTokens(req, target.maxOutputTokens);
  if (req.temperature !== undefined) gen.temperature = req.temperature;
  if (req.top_p !== undefined) gen.topP = req.top_p;
  if (req.top_k !== undefined) gen.topK = req.top_k;
  if (maxTokens !== undefined) gen.maxOutputTokens = maxTokens;
  // Gemini refuses an empty stopSequences (400 "stopSequences value of 0 but the supported range
  // is from 1"), so `stop: []` is left out. An empty string stops nothing a client could mean, so
  // `stop: ['']` (or `''`) is no stop either. At most 5 are allowed: the body schema already
  // refuses more than OpenAI's 4.
  const stops = typeof req.stop === 'string' ? [req.stop] : (req.stop ?? []);
  if (stops.length > 0) {
    const kept = stops.includes('') ? stops.filter((s) => s !== '') : stops;
    if (kept.length > 0) gen.stopSequences = kept;
  }
  if (req.n !== undefined) gen.candidateCount = req.n;
  // Gemini 2.5 and later refuse them (`takesPenalties`): dropped there, as what an upstream does
  // not support is.
  if (takesPenalties(target.upstreamModel, target.extra)) {
    if (req.presence_penalty !== undefined) gen.presencePenalty = req.presence_penalty;
    if (req.frequency_penalty !== undefined) gen.frequencyPenalty = req.frequency_penalty;
  }
  if (req.seed !== undefined) gen.seed = geminiSeed(req.seed);
  const rf = req.response_format;
  if (rf?.type === 'json_object') gen.responseMimeType = 'application/json';
  else if (rf?.type === 'json_schema') {
    gen.responseMimeType = 'application/json';
    if (rf.json_schema.schema) gen.responseJsonSchema = rf.json_schema.schema;
  }

  // Reasoning asked of a model without thinking is dropped, as an upstream drops what it does not
  // support: such a model refuses any thinkingConfig.
  const r = takesThinking(target.upstreamModel, target.extra) ? resolveReasoning(req) : undefined;
  const range = budgetRange(target.upstreamModel);
  if (r?.enabled === true) {
    const cfg: Record<string, unknown> = { includeThoughts: !r.exclude };
    if (levelModel && r.effort) {
      cfg.thinkingLevel = thinkingLevel(r.effort, target.upstreamModel);
    } else {
      cfg.thinkingBudget = reasoningBudget(
        r,
        maxTokens ?? BUDGET_BASE,
        range ? { min: range.min, cap: range.max } : {},
      );
    }
    gen.thinkingConfig = cfg;
  } else if (r?.enabled === false) {
    // Gemini 3 cannot turn thinking off and thinks at `high` when told nothing: the lowest level
    // it takes (minimal on Flash, low on Pro) is the nearest to off, as 128 is for 2.5 Pro.
    gen.thinkingConfig = levelModel
      ? { thinkingLevel: thinkingLevel('minimal', target.upstreamModel) }
      : { thinkingBudget: range?.off ?? 0 };
  }
  if (Object.keys(gen).length > 0) body.generationConfig = gen;

  const fns = functionTools(req);
  if (fns.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: fns.tools.map((t) => ({
          name: t.function.name,
          ...(t.function.description ? { description: t.function.description } : {}),
          ...(t.function.parameters ? { parametersJsonSchema: t.function.parameters } : {}),
        })),
      },
    ];
    const tc = fns.choice;
    if (tc === 'none') body.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
    else if (tc === 'required') body.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
    else if (tc === 'tool') {
      body.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [fns.name] } };
    } else if (tc === 'auto') body.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  }

  const model = target.upstreamModel.replace(/^models\//, '');
  const path = opts.stream
    ? `models/${model}:streamGenerateContent?alt=sse`
    : `models/${model}:generateContent`;
  return {
    method: 'POST',
    url: geminiUrl(target, path),
    headers: geminiHeaders(target, opts.stream ? 'text/event-stream' : 'application/json'),
    body: JSON.stringify(body),
  };
}

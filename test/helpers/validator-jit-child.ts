/**
 * Run by test/foundation/validator-jit.test.ts as `node --allow-natives-syntax --import tsx`:
 * compiles each hot request-body schema as the gateway does (validation.ts `compileBody`) and
 * asks V8 to optimize every function ajv made for it. Prints one JSON line: per schema, how many
 * functions and which of them V8's optimizing compiler refused.
 */
import type { ValidateFunction } from 'ajv';
import { compileBody } from '../../src/http/validation.js';
import {
  AnthropicCountTokensSchema,
  AnthropicMessagesSchema,
} from '../../src/http/wire/anthropic-request-schema.js';
import { ChatRequestSchema } from '../../src/http/wire/chat-request-schema.js';
import { ResponsesRequestSchema } from '../../src/http/wire/responses-request-schema.js';

interface Env {
  validate?: ValidateFunction;
  refs?: Record<string, unknown>;
}

/** The root function and every referenced one ajv compiled apart (`inlineRefs: false`). */
function functionsOf(root: ValidateFunction): ValidateFunction[] {
  const out = new Set<ValidateFunction>([root]);
  const envs: Env[] = [(root as unknown as { schemaEnv: Env }).schemaEnv];
  const seen = new Set<Env>();
  while (envs.length > 0) {
    const env = envs.pop()!;
    if (seen.has(env)) continue;
    seen.add(env);
    for (const r of Object.values(env.refs ?? {})) {
      const ref = r as Env | ValidateFunction;
      const fn = typeof ref === 'function' ? ref : ref.validate;
      if (fn) out.add(fn);
      if (typeof ref === 'object' && ref !== null) envs.push(ref);
      const own = (fn as unknown as { schemaEnv?: Env } | undefined)?.schemaEnv;
      if (own) envs.push(own);
    }
  }
  return [...out];
}

// V8's runtime functions: `%Name(...)` parses only with --allow-natives-syntax, so only in code
// compiled at run time.
const natives = (name: string) => new Function('f', `return %${name}(f);`) as (f: unknown) => number;
const prepare = natives('PrepareFunctionForOptimization');
const optimizeNext = natives('OptimizeFunctionOnNextCall');
const status = natives('GetOptimizationStatus');
/** GetOptimizationStatus's bit for a function running optimized code (V8's kOptimized). */
const OPTIMIZED = 1 << 4;

const schemas: Record<string, object> = {
  chat: ChatRequestSchema,
  responses: ResponsesRequestSchema,
  messages: AnthropicMessagesSchema,
  count_tokens: AnthropicCountTokensSchema,
};
const report: Record<string, { functions: number; refused: string[] }> = {};
for (const [name, schema] of Object.entries(schemas)) {
  const fns = functionsOf(compileBody(schema));
  const refused: string[] = [];
  for (const fn of fns) {
    // The first optimized call may still deoptimize once, when the error objects' shapes
    // settle; a function V8 refuses (too big) never ends up optimized.
    let optimized = false;
    for (let i = 0; i < 5 && !optimized; i++) {
      prepare(fn);
      fn({});
      optimizeNext(fn);
      fn({});
      optimized = (status(fn) & OPTIMIZED) !== 0;
    }
    if (!optimized) refused.push(fn.name);
  }
  report[name] = { functions: fns.length, refused };
}
process.stdout.write(`${JSON.stringify(report)}\n`);

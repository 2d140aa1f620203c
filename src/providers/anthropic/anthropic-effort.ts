/**
 * OpenRouter's `verbosity` -> Anthropic's `output_config.effort` (OpenRouter documents this
 * mapping for Anthropic; the Messages API takes `effort` GA, beside `output_config.format`).
 * Effort sets how many tokens Claude spends on a turn: text, tool calls and thinking alike.
 *
 * Which models, and which levels (the API's enum is low, medium, high, xhigh, max, but a model
 * answers 400 to the parameter when it has none, "This model does not support effort level
 * 'max'. Supported levels: high, low, medium." to a level it lacks):
 * - Claude Opus 4.5 (effort came with it): low, medium, high;
 * - Opus 4.6 and Sonnet 4.6: also max;
 * - Opus 4.7 and later 4.x Opus, and any 5.x: all five (xhigh came with Opus 4.7);
 * - Sonnet 4.5, Haiku 4.5, Opus 4.1 and older: none. `verbosity` is dropped there, as OpenRouter
 *   ignores it where a model cannot take it.
 * By name, in Anthropic's, Bedrock's and Vertex's spellings (`claude-model.ts`).
 *
 * A level the model lacks is sent as the nearest one it takes, ties going down (OpenRouter moves
 * an effort to the nearest supported level, and maps xhigh down to high on Gemini 3): xhigh and
 * max are high on Opus 4.5, xhigh is high on Opus 4.6.
 *
 * The channel setting `effort` overrides the name rule (a name it does not know, a proxy that
 * lacks the parameter): `false` sends none; `true` sends it, with the levels the name rule gives
 * the model, or low, medium and high (what every model with effort takes) for a name it does not
 * know; a list (`["low", "medium", "high", "max"]`) names the levels the model takes.
 */
import type { ChatRequest } from '../../gateway/chat/types.js';
import type { UpstreamTarget } from '../types.js';
import { claudeVersion } from './claude-model.js';

export type Effort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** Lowest to highest; every list below keeps this order. */
const ALL: readonly Effort[] = ['low', 'medium', 'high', 'xhigh', 'max'];
const BASIC: readonly Effort[] = ['low', 'medium', 'high'];
const WITH_MAX: readonly Effort[] = ['low', 'medium', 'high', 'max'];

function levelsByName(model: string): readonly Effort[] | undefined {
  const v = claudeVersion(model);
  if (!v || v.major < 4) return undefined;
  if (v.major > 4) return ALL;
  if (v.family === 'opus') {
    if (v.minor >= 7) return ALL;
    if (v.minor === 6) return WITH_MAX;
    return v.minor === 5 ? BASIC : undefined;
  }
  if (v.family === 'sonnet' && v.minor >= 6) return WITH_MAX;
  return undefined;
}

const isEffort = (v: unknown): v is Effort => typeof v === 'string' && (ALL as readonly string[]).includes(v);

/** The effort levels the model takes, lowest first, or undefined when it takes no effort. */
export function effortLevels(model: string, extra?: Record<string, unknown>): readonly Effort[] | undefined {
  const setting = extra?.effort;
  if (setting === false) return undefined;
  if (Array.isArray(setting)) {
    const levels = ALL.filter((l) => setting.includes(l));
    return levels.length > 0 ? levels : undefined;
  }
  const named = levelsByName(model);
  return setting === true ? (named ?? BASIC) : named;
}

/** Whether the model takes `output_config.effort` (so `verbosity` is sent): route planning asks it per upstream. */
export function takesEffort(model: string, extra?: Record<string, unknown>): boolean {
  const setting = extra?.effort;
  if (typeof setting === 'boolean') return setting;
  if (Array.isArray(setting)) return setting.some(isEffort);
  return levelsByName(model) !== undefined;
}

/** `output_config.effort` for a request: its `verbosity` at the nearest level the model takes, or undefined. */
export function anthropicEffort(req: ChatRequest, target: UpstreamTarget): Effort | undefined {
  return nearestEffort(req.verbosity, target);
}

/**
 * An effort at the nearest level the model takes, ties going down; undefined when it is not one
 * of Anthropic's levels or the model takes no effort.
 */
export function nearestEffort(wanted: unknown, target: UpstreamTarget): Effort | undefined {
  if (!isEffort(wanted)) return undefined;
  const levels = effortLevels(target.upstreamModel, target.extra);
  if (!levels) return undefined;
  const at = ALL.indexOf(wanted);
  let best = levels[0];
  for (const l of levels) if (Math.abs(ALL.indexOf(l) - at) < Math.abs(ALL.indexOf(best) - at)) best = l;
  return best;
}

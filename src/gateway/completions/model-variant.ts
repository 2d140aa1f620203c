import { badRequest } from '../errors.js';
import { perObject } from '../per-object.js';
import type { PlanModel } from '../routing/plan.js';
import type { RouteTarget, SortBy } from '../routing/types.js';

/**
 * OpenRouter's model variants: a suffix on a chat model id (`openai/gpt-4o:nitro`) asking for a
 * way of serving that model (docs/routing.md, "Model variants"). A model registered under the
 * full id (a real `x:free`) is that model: the suffix is read only when the full id is unknown.
 *
 * - `:nitro`, `:floor`, `:exacto`: `provider.sort` `throughput`, `price`, `exacto` for that
 *   model's upstreams, unless the request sets `provider.sort` or `provider.order` itself.
 * - `:thinking`: reasoning on for that model's upstreams, unless the request decides it.
 * - `:extended`: the base model is served (the gateway has no extended-context tier; a prompt
 *   too long for the base model fails as it would without the suffix, never silently worse).
 * - `:free`: served only by the base model's upstreams that charge nothing for it (the model's
 *   registry price, or the channel's own `settings.pricing`, all zero); none is a 400, since
 *   serving it elsewhere would bill a request the client was told costs nothing.
 * - `:online`: a 400. The gateway has no web search, and an answer without it looks the same
 *   as one with it: the client would take a stale answer for a searched one.
 */
export type Variant = 'nitro' | 'floor' | 'exacto' | 'thinking' | 'online' | 'extended' | 'free';

const VARIANTS: ReadonlySet<string> = new Set<Variant>([
  'nitro',
  'floor',
  'exacto',
  'thinking',
  'online',
  'extended',
  'free',
]);
const SORTS: Partial<Record<Variant, SortBy>> = { nitro: 'throughput', floor: 'price', exacto: 'exacto' };
const REASONING = ['reasoning'] as const;

/** A model of the request as routing sees it. */
export interface ChatModel extends PlanModel {
  /** The model routed: the name as written, without its variant suffix. */
  id: string;
  variant?: Variant;
}

/** `id` without its variant suffix, and the variant; undefined when it carries none we know. */
export function splitVariant(id: string): { base: string; variant: Variant } | undefined {
  const i = id.lastIndexOf(':');
  if (i <= 0) return undefined;
  const v = id.slice(i + 1);
  return VARIANTS.has(v) ? { base: id.slice(0, i), variant: v as Variant } : undefined;
}

/**
 * `name` as a chat model: its upstreams as written (one registry lookup, the usual case), else
 * those of its base model with what its variant asks for, else unknown (targets undefined).
 * `field` names the request field for the 400 of a variant the gateway cannot honor.
 */
export function resolveChatModel(
  name: string,
  targetsFor: (model: string) => RouteTarget[] | undefined,
  field: 'model' | 'models',
): ChatModel {
  const targets = targetsFor(name);
  if (targets) return { name, id: name, targets };
  const split = splitVariant(name);
  const base = split && targetsFor(split.base);
  // An unknown base is an unknown model, whatever the suffix: a 404, or an ignored fallback.
  if (!split || !base) return { name, id: name, targets: undefined };
  const { variant } = split;
  if (variant === 'online')
    throw badRequest(
      `${field}: ${name}: the :online variant (web search) is not available on this gateway; ask for ${split.base} to be served without web search`,
      field,
    );
  const served = variant === 'free' ? freeOf(base) : base;
  if (variant === 'free' && served.length === 0 && base.length > 0)
    throw badRequest(
      `${field}: ${name}: no upstream of this gateway serves ${split.base} for free (each charges its price); ask for ${split.base}, or have an admin register ${name} as a model`,
      field,
    );
  return {
    name,
    id: split.base,
    targets: served,
    variant,
    sort: SORTS[variant],
    params: variant === 'thinking' ? REASONING : undefined,
  };
}

/**
 * The upstreams that charge nothing (every price of the target, the channel's own included, is
 * zero). Worked out once per target list: the catalog answers with the same array until it is
 * rebuilt, and a list where every upstream is free is returned as it is.
 */
const freeOf = perObject((ts: RouteTarget[]) => {
  const free = ts.filter(isFree);
  return free.length === ts.length ? ts : free;
});

function isFree(t: RouteTarget): boolean {
  return Object.values(t.pricing).every((v) => v === undefined || Number(v) === 0);
}

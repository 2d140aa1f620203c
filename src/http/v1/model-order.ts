import { badRequest } from '../../gateway/errors.js';
import type { ModelInfo } from '../../gateway/registry/index.js';
import { DEFAULT_PAGE } from './model-list.js';

/**
 * The order and the page of `GET /v1/models`: OpenRouter's `sort` values this gateway has the
 * figures for, and its opt-in `offset`/`limit` paging.
 */
const SORTS = [
  'newest',
  'pricing-low-to-high',
  'pricing-high-to-low',
  'context-high-to-low',
  'throughput-high-to-low',
  'latency-low-to-high',
] as const;
export type ModelSort = (typeof SORTS)[number];

/**
 * OpenRouter's other sorts (its SDK's `GetModelsSort`), and why each is a 400 here rather than
 * the default order passed off as the one asked for.
 */
const UNAVAILABLE: Record<string, string> = {
  'most-popular': 'the gateway keeps no ranking of models by use',
  'top-weekly': 'the gateway keeps no ranking of models by use',
  'intelligence-high-to-low': 'the gateway has no benchmark scores',
  'coding-high-to-low': 'the gateway has no benchmark scores',
  'agentic-high-to-low': 'the gateway has no benchmark scores',
  'design-arena-elo-high-to-low': 'the gateway has no benchmark scores',
};

export function parseSort(value: string | undefined): ModelSort | undefined {
  if (value === undefined) return undefined;
  if ((SORTS as readonly string[]).includes(value)) return value as ModelSort;
  const why = UNAVAILABLE[value];
  throw badRequest(
    why
      ? `sort: ${value} is not available on this gateway (${why}); use one of ${SORTS.join(', ')}`
      : `sort: unknown value ${JSON.stringify(value)}; expected one of ${SORTS.join(', ')}`,
    'sort',
  );
}

/** A model's measured speed: the best of its upstreams' figures, NaN when none is measured. */
export interface Speed {
  tokensPerSec: number;
  latencyMs: number;
}

/**
 * `models` (in id order) sorted as asked; ties, and models without the figure sorted on, keep
 * the id order, the latter after the others. Prices are the model's own (what the list shows),
 * averaged over prompt and completion as OpenRouter's SDK describes.
 */
export function sortModels(
  models: ModelInfo[],
  sort: ModelSort,
  speed: (m: ModelInfo) => Speed,
): ModelInfo[] {
  const key = sortKey(sort, speed);
  const keyed = models.map((m, i) => ({ m, i, k: key(m) }));
  keyed.sort((a, b) => nanLast(a.k, b.k) || a.i - b.i);
  return keyed.map((x) => x.m);
}

/** The number a sort orders by, ascending (descending orders negate it). */
function sortKey(sort: ModelSort, speed: (m: ModelInfo) => Speed): (m: ModelInfo) => number {
  const price = (m: ModelInfo) => (Number(m.pricing.prompt) + Number(m.pricing.completion)) / 2;
  switch (sort) {
    case 'newest':
      return (m) => -m.created;
    case 'pricing-low-to-high':
      return price;
    case 'pricing-high-to-low':
      return (m) => -price(m);
    case 'context-high-to-low':
      return (m) => -m.context_length;
    case 'throughput-high-to-low':
      return (m) => -speed(m).tokensPerSec;
    case 'latency-low-to-high':
      return (m) => speed(m).latencyMs;
  }
}

function nanLast(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  return a - b;
}

export interface ModelPage<T> {
  data: T[];
  links: { next: string | null };
  total_count: number;
}

/**
 * One page of `items`: all of them unless `offset` or `limit` is given (OpenRouter's paging is
 * opt-in), `total_count` counting them all. `links.next` is the URL asked (`url`: path and
 * query, as the request line had it) with `offset` moved past this page, or null on the last.
 */
export function pageOf<T>(items: T[], p: { offset?: number; limit?: number }, url: string): ModelPage<T> {
  if (p.offset === undefined && p.limit === undefined)
    return { data: items, links: { next: null }, total_count: items.length };
  const offset = p.offset ?? 0;
  const limit = p.limit ?? DEFAULT_PAGE;
  const data = items.slice(offset, offset + limit);
  const end = offset + data.length;
  return {
    data,
    links: { next: end < items.length ? nextUrl(url, limit, end) : null },
    total_count: items.length,
  };
}

function nextUrl(url: string, limit: number, offset: number): string {
  const q = url.indexOf('?');
  const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  params.delete('offset');
  params.delete('limit');
  params.set('limit', String(limit));
  params.set('offset', String(offset));
  return `${q === -1 ? url : url.slice(0, q)}?${params}`;
}

import type { Pricing } from '../registry/model-info.js';

/** One upstream that can serve one model: what routing needs to know about it. */
export interface RouteTarget {
  channelId: number;
  channelName: string;
  kind: string;
  baseUrl: string;
  keys: string[];
  upstreamModel: string;
  priority: number;
  weight: number;
  settings: Record<string, unknown>;
  /** Registry id of the model, e.g. `openai/gpt-4o-mini`. */
  modelId: string;
  contextLength: number;
  maxCompletionTokens: number | null;
  /**
   * What this upstream charges for the model (decimal strings of USD per token / request /
   * image): the registry's prices with the channel's `settings.pricing` for the model over them.
   */
  pricing: Pricing;
  /** Parameters the model accepts, when the registry knows (null = whatever the adapter supports). */
  supportedParameters: string[] | null;
}

export interface Candidate {
  target: RouteTarget;
  /** Health key: one circuit per upstream and model. */
  healthKey: string;
}

/** How `provider.sort` (or a model variant such as `:nitro`) orders a model's upstreams. */
export type SortBy = 'price' | 'throughput' | 'latency' | 'exacto';

export interface ProviderPrefs {
  order?: string[];
  only?: string[];
  ignore?: string[];
  allow_fallbacks?: boolean;
  require_parameters?: boolean;
  data_collection?: 'allow' | 'deny';
  /** Only upstreams declaring zero data retention (`settings.zdr: true`). */
  zdr?: boolean;
  quantizations?: string[];
  sort?: SortBy | { by?: string | null; partition?: string | null };
  max_price?: {
    prompt?: number | string;
    completion?: number | string;
    request?: number | string;
    image?: number | string;
  };
}

/** One try of one candidate, for the request log and the x-modelgate-attempts header. */
export interface AttemptRecord {
  model: string;
  provider: string;
  channel_id: number;
  ok: boolean;
  error_kind?: string;
  upstream_status?: number;
  ms: number;
}

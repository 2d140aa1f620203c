import { takes } from '../../gateway/chat/parameters.js';
import { toRouteTarget } from '../../gateway/completions/chat-wiring.js';
import type { ModelInfo, Registry, Target } from '../../gateway/registry/index.js';
import type { CircuitState, HealthTracker } from '../../gateway/routing/health.js';
import type { RouteTarget } from '../../gateway/routing/types.js';
import { getEmbeddingAdapter } from '../../providers/embedding-registry.js';
import { toWireModel } from './model-wire.js';

/**
 * OpenRouter's endpoints list of one model (`GET /api/v1/models/{author}/{slug}/endpoints`,
 * @openrouter/sdk's `ListEndpointsResponse` and `PublicEndpoint`): one endpoint per enabled
 * channel serving the model, as routing sees it. A channel's address and keys never appear.
 */
export interface EndpointDeps {
  registry: Pick<Registry, 'targetsFor'>;
  health: HealthTracker;
  /** What a chat upstream's adapter sends (the chat plan's `adapterParams`). */
  adapterParams(kind: string, target: RouteTarget): ReadonlySet<string> | undefined;
}

export function toWireEndpoints(model: ModelInfo, deps: EndpointDeps) {
  const wire = toWireModel(model);
  return {
    id: wire.id,
    name: wire.name,
    created: wire.created,
    description: wire.description,
    // Required, nullable, in this response (optional in the list's Model): nothing to say.
    architecture: { ...wire.architecture, tokenizer: null, instruct_type: null },
    endpoints: servingTargets(model, deps.registry).map(({ target, chat }) =>
      toWireEndpoint(model, target, chat, deps),
    ),
  };
}

/**
 * The enabled channels serving `model` on either endpoint, each once, in routing's order (priority,
 * then weight, then id), and whether it serves chat.
 */
function servingTargets(model: ModelInfo, registry: EndpointDeps['registry']) {
  const chat = registry.targetsFor(model.id, { endpoint: 'chat' });
  const byChannel = new Map<number, { target: Target; chat: boolean }>();
  for (const t of chat) byChannel.set(t.channelId, { target: t, chat: true });
  for (const t of registry.targetsFor(model.id, { endpoint: 'embeddings' }))
    if (!byChannel.has(t.channelId)) byChannel.set(t.channelId, { target: t, chat: false });
  return [...byChannel.values()].sort(
    (a, b) =>
      b.target.priority - a.target.priority ||
      b.target.weight - a.target.weight ||
      a.target.channelId - b.target.channelId,
  );
}

function toWireEndpoint(model: ModelInfo, t: Target, chat: boolean, deps: EndpointDeps) {
  const route = toRouteTarget(t);
  // A chat upstream takes what its adapter sends of the model's list, the rule
  // `provider.require_parameters` routes by; an embeddings upstream what its embedding adapter
  // honours of it (an OpenAI-compatible one no input_type).
  const adapter = chat ? deps.adapterParams(t.kind, route) : undefined;
  const embedding = chat ? undefined : getEmbeddingAdapter(t.kind, t.upstreamModel)?.parameters;
  const params = chat
    ? model.supported_parameters.filter((p) => adapter !== undefined && takes(adapter, p))
    : model.supported_parameters.filter((p) => embedding?.includes(p));
  const toolChoice = params.includes('tool_choice');
  const provider = typeof t.settings.provider === 'string' ? t.settings.provider : t.channelName;
  const healthKey = `${t.channelId}:${model.id}`;
  return {
    name: `${t.channelName} | ${model.name}`,
    model_id: model.id,
    model_name: model.name,
    provider_name: provider,
    // OpenRouter's tag selects one endpoint in `provider.order`/`only`: here the channel's name.
    tag: t.channelName,
    context_length: model.context_length,
    max_completion_tokens: model.max_completion_tokens,
    max_prompt_tokens: null,
    pricing: { ...t.pricing },
    quantization: typeof t.settings.quantization === 'string' ? t.settings.quantization : null,
    status: endpointStatus(
      deps.health.state(healthKey),
      deps.health.usableKeys(t.channelId, route.keys, route).length > 0,
    ),
    supported_parameters: params,
    // The gateway tests no tool_choice values: each is as supported as the parameter itself.
    supports_tool_choice: { auto: toolChoice, function: toolChoice, none: toolChoice, required: toolChoice },
    supports_implicit_caching: false,
    supports_voice_cloning: false,
    // OpenRouter's windowed percentiles and uptimes. The health records keep moving averages and
    // counts since the process started, neither of which these are: null, "not enough data".
    latency_last_30m: null,
    throughput_last_30m: null,
    uptime_last_5m: null,
    uptime_last_30m: null,
    uptime_last_1d: null,
  };
}

/**
 * OpenRouter's endpoint `status` (0, or a negative degradation level) from the health records:
 * 0 when requests go to it; -5 while its circuit is half-open (one probe request at a time);
 * -10 when routing passes it by, its circuit open or every one of its keys rejected.
 */
function endpointStatus(state: CircuitState, keysLeft: boolean): number {
  if (!keysLeft || state === 'open') return -10;
  return state === 'half_open' ? -5 : 0;
}

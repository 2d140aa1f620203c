import { splitVariant } from '../../gateway/completions/model-variant.js';
import { notFound } from '../../gateway/errors.js';
import { isAllowed, type ModelInfo, type Registry } from '../../gateway/registry/index.js';

/**
 * The model `id` names on the one-model routes (`/v1/models/<id>`, `/api/v1/model/<a>/<s>`, the
 * endpoints list): an alias or plain name resolves as chat resolves it. The answer is the model
 * when some enabled channel serves it and the key may use it; otherwise a 404, the same whichever
 * it is, so a key learns nothing of the models it may not use.
 *
 * A variant id (`acme/chat-1:nitro`, docs/routing.md "Model variants") is a way chat serves its
 * base model, not a model: the list shows only the base, so these routes do not answer the base
 * for it either (nor could they say what `:free` costs, or `:nitro` is served by). Its 404 says
 * so and names the base, when the key may use the base (nothing is said of one it may not). A
 * model registered under the full id is that model, as in chat.
 */
export function usableModel(
  registry: Pick<Registry, 'resolve' | 'servableModels'>,
  allowed: string[] | null,
  id: string,
): ModelInfo {
  const usable = (name: string) => {
    const model = registry.resolve(name);
    const servable = model && registry.servableModels().some((m) => m.id === model.id);
    return model && servable && isAllowed(model, allowed, registry) ? model : undefined;
  };
  const model = usable(id);
  if (model) return model;
  const split = splitVariant(id);
  const base = split && usable(split.base);
  if (split && base)
    throw notFound(
      `model ${id} not found: :${split.variant} is a model variant (a way of asking chat for ${base.id}), not a model of its own; the models list and this route know ${base.id}`,
    );
  throw notFound(`model ${id} not found`);
}

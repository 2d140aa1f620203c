/**
 * The setup of the model-list tests (`/v1/models` and OpenRouter's model routes): a gateway whose
 * channels declare their models, with discovery off, so the lists answer from the registry and
 * the channels alone; signed in as root, making API keys.
 *
 *   const s = await startModelListGateway({
 *     channels: [listChannel('up', [CHAT, EMBED]), listChannel('off', [OLD], { status: 2 })],
 *     models: [{ id: CHAT, context_length: 64000 }],
 *   });
 *   key = await s.newKey();
 *   onlyChat = await s.newKey({ allowed_models: [CHAT] });
 */
import { expect } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A channel serving `models` at a closed loopback port (9, discard): nothing here asks an
 * upstream (discovery is off, and the list routes never call one), so any address would do, and
 * one that answers nothing shows it. `more` overrides any field (`kind`, `keys`, `status`, ...).
 */
export function listChannel(name: string, models: string[], more: Record<string, unknown> = {}) {
  return {
    name,
    kind: 'openai-compatible',
    base_url: `http://127.0.0.1:9/${name}/v1`,
    keys: [`sk-${name}`],
    models,
    ...more,
  };
}

export interface ModelListGateway {
  gw: TestGateway;
  /** Root's session cookie. */
  cookie: string;
  /** A new API key of root's (`body` adds fields: `allowed_models`, ...); its secret. */
  newKey(body?: Record<string, unknown>): Promise<string>;
}

export async function startModelListGateway(config: {
  channels: unknown[];
  models?: unknown[];
  /** Gateway settings beside `discover_models: false`. */
  gateway?: Record<string, unknown>;
}): Promise<ModelListGateway> {
  const gw = await startTestGateway({
    channels: config.channels,
    models: config.models ?? [],
    gateway: { discover_models: false, ...config.gateway },
  });
  const cookie = await gw.login();
  return {
    gw,
    cookie,
    async newKey(body = {}) {
      const r = await gw.call('POST', '/api/key', { cookie, body: { name: 'k', ...body } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data.key as string;
    },
  };
}

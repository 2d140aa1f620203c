import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelsRepo } from '../../src/store/models-repo.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { storeModelRow } from '../helpers/model-rows.js';

/**
 * What `POST`/`PUT /api/model` take field by field: a price of null removes the admin's price for
 * that key alone (the console's cleared price field sends it; it used to send "0", which pinned
 * the model free), and modalities are the known names only.
 */

const BUILT_IN = 'openai/gpt-4o-mini';

let gw: TestGateway;
let root: string;

beforeAll(async () => {
  gw = await startTestGateway({
    models: [
      {
        id: 'acme/configured',
        name: 'Acme Configured',
        pricing: { prompt: '0.000001', completion: '0.000002', input_cache_read: '0.0000005' },
      },
    ],
  });
  root = await gw.login();
});
afterAll(async () => {
  await gw?.close();
});

const put = (body: Record<string, unknown>) => gw.call('PUT', '/api/model', { cookie: root, body });
const post = (body: Record<string, unknown>) => gw.call('POST', '/api/model', { cookie: root, body });
const get = async (id: string) => (await gw.call('GET', `/api/model/${id}`, { cookie: root })).body.data;
/** The admin entry as stored: only the fields the admin set. */
const stored = async (id: string) => {
  const row = await new ModelsRepo(gw.services.database).byId(id);
  return row ? JSON.parse(row.data) : undefined;
};
const drop = (id: string) => gw.call('DELETE', `/api/model/${id}`, { cookie: root });

describe('PUT /api/model with a price of null', () => {
  it("removes that price from a built-in model's admin entry: the built-in price shows again", async () => {
    const defaults = await get(BUILT_IN);
    expect(defaults.pricing.input_cache_read).toBe('0.000000075');
    try {
      const set = await put({ id: BUILT_IN, pricing: { prompt: '0.000009', input_cache_read: '0.000004' } });
      expect(set.status).toBe(200);
      expect(set.body.data.pricing).toMatchObject({ prompt: '0.000009', input_cache_read: '0.000004' });

      const unset = await put({ id: BUILT_IN, pricing: { input_cache_read: null } });
      expect(unset.status, JSON.stringify(unset.body)).toBe(200);
      // Not 0: the built-in price, and the admin's other price stays.
      expect(unset.body.data.pricing).toEqual({ ...defaults.pricing, prompt: '0.000009' });
      expect(unset.body.data.overridden).toBe(true);
      expect((await stored(BUILT_IN)).pricing).toEqual({ prompt: '0.000009' });
      // A later change without it does not bring the old value back.
      await put({ id: BUILT_IN, name: 'Mini' });
      expect((await get(BUILT_IN)).pricing.input_cache_read).toBe('0.000000075');

      // The last admin price removed: the entry keeps no pricing at all.
      const none = await put({ id: BUILT_IN, pricing: { prompt: null } });
      expect(none.status).toBe(200);
      expect(none.body.data.pricing).toEqual(defaults.pricing);
      expect(await stored(BUILT_IN)).toEqual({ id: BUILT_IN, name: 'Mini' });
    } finally {
      await drop(BUILT_IN);
    }
  });

  it('falls back to the config file, and for a model only an admin describes to 0 or the prompt price', async () => {
    try {
      await put({ id: 'acme/configured', pricing: { prompt: '0.000003', input_cache_read: '0.000002' } });
      const cfg = await put({ id: 'acme/configured', pricing: { input_cache_read: null, prompt: null } });
      expect(cfg.status).toBe(200);
      expect(cfg.body.data.pricing).toMatchObject({ prompt: '0.000001', input_cache_read: '0.0000005' });

      const own = await post({
        id: 'acme/own-priced',
        pricing: { prompt: '0.000002', completion: '0.000004', input_cache_read: '0.000001' },
      });
      expect(own.status).toBe(200);
      // Set and unset in one request; an unset price nobody else sets is absent (a cached token
      // then costs the prompt price), and a base price is 0.
      const unset = await put({
        id: 'acme/own-priced',
        pricing: { input_cache_read: null, completion: null, request: '0.01' },
      });
      expect(unset.status).toBe(200);
      expect(unset.body.data.pricing).toEqual({
        prompt: '0.000002',
        completion: '0',
        request: '0.01',
        image: '0',
      });
      expect((await stored('acme/own-priced')).pricing).toEqual({ prompt: '0.000002', request: '0.01' });
      // Unsetting what the entry never set changes nothing.
      const again = await put({ id: 'acme/own-priced', pricing: { web_search: null } });
      expect(again.body.data.pricing).toEqual(unset.body.data.pricing);
    } finally {
      await drop('acme/configured');
      await drop('acme/own-priced');
    }
  });

  it('takes null in a POST as a price not set, and names what is neither a price nor null', async () => {
    try {
      const made = await post({ id: 'acme/null-post', pricing: { prompt: '0.000001', completion: null } });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(made.body.data.pricing).toMatchObject({ prompt: '0.000001', completion: '0' });
      expect((await stored('acme/null-post')).pricing).toEqual({ prompt: '0.000001' });
      const bad = await put({ id: 'acme/null-post', pricing: { prompt: 'abc' } });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({
        success: false,
        message: 'pricing.prompt: must be a numeric string, a number >= 0, or null',
      });
    } finally {
      await drop('acme/null-post');
    }
  });
});

describe('modalities of an admin entry', () => {
  it('takes the known names, and refuses another with a 400 naming it', async () => {
    try {
      const made = await post({
        id: 'acme/seeing',
        input_modalities: ['text', 'image', 'file', 'audio', 'video'],
        output_modalities: ['text', 'image', 'audio'],
      });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      const emb = await put({ id: 'acme/seeing', output_modalities: ['embeddings'] });
      expect(emb.body.data.output_modalities).toEqual(['embeddings']);

      const cases: Array<[Record<string, unknown>, string]> = [
        [
          { input_modalities: ['text', 'picture'] },
          'input_modalities: "picture" is not a known modality; use text, image, file, audio or video',
        ],
        [
          { input_modalities: ['Text'] },
          'input_modalities: "Text" is not a known modality; use text, image, file, audio or video',
        ],
        [
          { output_modalities: ['embedding'] },
          'output_modalities: "embedding" is not a known modality; use text, image, embeddings, audio, video, rerank, speech or transcription',
        ],
        // An output-only name is no input, and the other way round.
        [
          { input_modalities: ['embeddings'] },
          'input_modalities: "embeddings" is not a known modality; use text, image, file, audio or video',
        ],
        [
          { output_modalities: ['file'] },
          'output_modalities: "file" is not a known modality; use text, image, embeddings, audio, video, rerank, speech or transcription',
        ],
      ];
      for (const [body, message] of cases) {
        const r = await put({ id: 'acme/seeing', ...body });
        expect(r.status, message).toBe(400);
        expect(r.body).toEqual({ success: false, message });
        const created = await post({ id: 'acme/never-made', ...body });
        expect(created.status).toBe(400);
        expect(created.body.message).toBe(message);
      }
      // Nothing of the refused changes was kept, and nothing was created.
      expect(await get('acme/seeing')).toMatchObject({
        input_modalities: ['text', 'image', 'file', 'audio', 'video'],
        output_modalities: ['embeddings'],
      });
      expect((await gw.call('GET', '/api/model/acme/never-made', { cookie: root })).status).toBe(404);
    } finally {
      await drop('acme/seeing');
    }
  });
});

describe('lists of an admin entry set to null', () => {
  it("unsets them: a built-in model's lists show again, and a later change does not bring them back", async () => {
    const defaults = await get(BUILT_IN);
    expect(defaults.input_modalities).toEqual(['text', 'image', 'file']);
    expect(defaults.supported_parameters).toContain('temperature');
    try {
      const pinned = {
        aliases: ['mini-pinned'],
        input_modalities: ['text'],
        output_modalities: ['text', 'image'],
        supported_parameters: ['temperature'],
      };
      const set = await put({ id: BUILT_IN, ...pinned });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body.data).toMatchObject(pinned);

      // What the console sends for the fields it clears.
      const unset = await put({
        id: BUILT_IN,
        aliases: null,
        input_modalities: null,
        output_modalities: null,
        supported_parameters: null,
      });
      expect(unset.status, JSON.stringify(unset.body)).toBe(200);
      for (const k of Object.keys(pinned)) expect(unset.body.data[k], k).toEqual(defaults[k]);
      expect(await stored(BUILT_IN)).toEqual({ id: BUILT_IN });
      await put({ id: BUILT_IN, name: 'Mini' });
      expect(await get(BUILT_IN)).toMatchObject({
        name: 'Mini',
        input_modalities: defaults.input_modalities,
      });
    } finally {
      await drop(BUILT_IN);
    }
  });

  it('falls back to text in and out and no parameter list for a model only an admin describes', async () => {
    try {
      const made = await post({
        id: 'acme/own-lists',
        input_modalities: ['text', 'image'],
        supported_parameters: ['tools'],
        output_modalities: null,
      });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(made.body.data.output_modalities).toEqual(['text']);
      const unset = await put({ id: 'acme/own-lists', input_modalities: null, supported_parameters: null });
      expect(unset.status).toBe(200);
      expect(unset.body.data).toMatchObject({
        input_modalities: ['text'],
        output_modalities: ['text'],
        supported_parameters: [],
      });
      expect(await stored('acme/own-lists')).toEqual({ id: 'acme/own-lists' });
    } finally {
      await drop('acme/own-lists');
    }
  });

  it('refuses an empty modality list, and stores an empty parameter list (parameters not known)', async () => {
    try {
      for (const field of ['input_modalities', 'output_modalities']) {
        const r = await put({ id: BUILT_IN, [field]: [] });
        expect(r.status, field).toBe(400);
        expect(r.body.message).toMatch(
          new RegExp(
            `^${field}: must name at least one modality \\(text, .*\\); leave it out, or null over the API, for the default list$`,
          ),
        );
        expect((await post({ id: 'acme/no-modality', [field]: [] })).status).toBe(400);
      }
      expect(await stored(BUILT_IN)).toBeUndefined();
      const none = await put({ id: BUILT_IN, supported_parameters: [] });
      expect(none.status).toBe(200);
      expect(none.body.data.supported_parameters).toEqual([]);
      expect(await stored(BUILT_IN)).toEqual({ id: BUILT_IN, supported_parameters: [] });
    } finally {
      await drop(BUILT_IN);
    }
  });
});

/**
 * Another instance's change reaches this one's memory up to a second later (the version row is
 * polled). Here the other instance's write is made straight to the database, so this instance
 * never learns of it before the request: an update must merge onto the stored entry, and a
 * create must not replace one.
 */
describe('changes another instance made', () => {
  const writeAsOtherInstance = (id: string, entry: Record<string, unknown>) =>
    storeModelRow(gw.services.database, id, entry);

  it('PUT merges onto the stored entry, keeping the fields the other instance set', async () => {
    const id = 'acme/two-admins';
    try {
      expect((await post({ id, name: 'Two', pricing: { prompt: '0.000001' } })).status).toBe(200);
      await writeAsOtherInstance(id, { name: 'Renamed elsewhere', pricing: { prompt: '0.000003' } });
      const r = await put({ id, context_length: 32_000 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(await stored(id)).toEqual({
        id,
        name: 'Renamed elsewhere',
        pricing: { prompt: '0.000003' },
        context_length: 32_000,
      });
      expect(r.body.data).toMatchObject({ name: 'Renamed elsewhere', context_length: 32_000 });
    } finally {
      await drop(id);
    }
  });

  it('PUT of a model only the other instance created yet updates it', async () => {
    const id = 'acme/made-elsewhere';
    try {
      await writeAsOtherInstance(id, { name: 'Elsewhere' });
      const r = await put({ id, pricing: { prompt: '0.000002' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(await stored(id)).toEqual({ id, name: 'Elsewhere', pricing: { prompt: '0.000002' } });
    } finally {
      await drop(id);
    }
  });

  it('POST of an id the other instance created is a 409 and leaves its entry', async () => {
    const id = 'acme/created-twice';
    try {
      await writeAsOtherInstance(id, { name: 'First' });
      const r = await post({ id, name: 'Second' });
      expect(r.status).toBe(409);
      expect(await stored(id)).toEqual({ id, name: 'First' });
    } finally {
      await drop(id);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  model,
  oaChunk,
  openaiChannel,
  rawStream,
  sse,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * The upstream series of /metrics (docs/scaling.md, "Metrics") count requests an upstream was
 * tried for: a chat request for a model nobody serves (404) is in the HTTP series only, and
 * leaves no `provider="none"` series and no zero-count token or cost series behind.
 */
let up: FakeUpstream;
let c: ChatGateway;
beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': {
      sse: sse([
        oaChunk({ role: 'assistant', content: 'hi' }, 'stop'),
        { ...oaChunk({}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } },
      ]),
    },
  });
  c = await startChatGateway({
    channels: [openaiChannel('oa', up, ['acme/m'])],
    models: [model('acme/m')],
    gateway: { max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const metrics = async () => (await c.gw.call('GET', '/metrics')).body as string;
const series = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`));

describe('upstream metrics', () => {
  it('count only requests an upstream was tried for', async () => {
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'nobody/serves-this', messages: userMsg('hi') },
    });
    expect(r.status).toBe(404);
    await c.gw.services.requestLogs.flush();
    let text = await metrics();
    // The request is counted where requests are counted...
    expect(text).toMatch(
      /^modelgate_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="404"\} 1$/m,
    );
    // ...and nowhere upstream.
    expect(series(text, 'modelgate_upstream_request_duration_seconds_count')).toEqual([]);
    expect(series(text, 'modelgate_time_to_first_token_seconds_count')).toEqual([]);
    expect(series(text, 'modelgate_tokens_total')).toEqual([]);
    expect(series(text, 'modelgate_cost_usd_total')).toEqual([]);
    expect(text).not.toContain('provider="none"');

    // A streamed request an upstream served is in each of them.
    const s = await rawStream(c, {
      model: 'acme/m',
      messages: userMsg('hi'),
      stream_options: { include_usage: true },
    });
    expect(s.res.status).toBe(200);
    await c.gw.services.requestLogs.flush();
    text = await metrics();
    expect(series(text, 'modelgate_upstream_request_duration_seconds_count')).toEqual([
      'modelgate_upstream_request_duration_seconds_count{endpoint="chat.completions",model="acme/m",provider="oa",status_class="2xx"} 1',
    ]);
    expect(series(text, 'modelgate_time_to_first_token_seconds_count')).toEqual([
      'modelgate_time_to_first_token_seconds_count{model="acme/m",provider="oa"} 1',
    ]);
    expect(series(text, 'modelgate_tokens_total')).toEqual([
      'modelgate_tokens_total{model="acme/m",type="prompt"} 3',
      'modelgate_tokens_total{model="acme/m",type="completion"} 1',
    ]);
    expect(text).not.toContain('provider="none"');
  });
});

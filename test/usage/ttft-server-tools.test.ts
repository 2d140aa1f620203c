import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type ChatGateway,
  fixture,
  model,
  oaChunk,
  requestLogs,
  sse,
  sseSteps,
  startChatGateway,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, type SseStep, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * The request log's `ttft_ms` is the first token the client is shown, and a server tool's
 * progress is none: an answer that searches the web first starts with the search (Anthropic's
 * server_tool_use and web_search_tool_result blocks, OpenRouter's url citations), which the client
 * may see, but its first token is the answer's. Each upstream says the search part, then waits for
 * the test (`until`): once the client has that part, the test moves the clock (only `Date` is
 * faked, and frozen) 10 s on and lets the answer come. The first token is then exactly 10 s after
 * the request; counted at the search it was 0.
 */
const LATER_MS = 10_000;

let claude: FakeUpstream;
let router: FakeUpstream;
let c: ChatGateway;
let release: () => void;

/** An answer forced to search (`tool_choice` naming web_search): it starts with the search. */
function forcedSearchStream(until: Promise<unknown>): SseStep[] {
  const steps = sseSteps(fixture('anthropic/web-search-stream.sse'))
    // The recorded answer says what it will search first (block 0): this one does not.
    .filter((s) => !s.includes('"index":0'))
    .map((s) => s.replace(/"index":(\d+)/g, (_, i) => `"index":${Number(i) - 1}`));
  const answer = steps.findIndex((s) => s.includes('"content_block":{"type":"text"'));
  return [...steps.slice(0, answer), { until }, ...steps.slice(answer)];
}

const CITATION = {
  type: 'url_citation',
  url_citation: {
    url: 'https://en.wikipedia.org/wiki/Claude_Shannon',
    title: 'Claude Shannon - Wikipedia',
    content: 'Claude Elwood Shannon (April 30, 1916 – February 24, 2001)',
    start_index: 0,
    end_index: 0,
  },
};

/** OpenRouter with its web plugin: the search's citations, then the answer. */
function citationsFirstStream(until: Promise<unknown>): SseStep[] {
  return [
    ...sse([oaChunk({ role: 'assistant', content: '' })], false),
    ...sse([oaChunk({ role: 'assistant', content: '', annotations: [CITATION] })], false),
    { until },
    ...sse([
      oaChunk({ content: 'Claude Shannon was born on April 30, 1916.' }, 'stop'),
      {
        ...oaChunk({}),
        choices: [],
        usage: { prompt_tokens: 900, completion_tokens: 12, total_tokens: 912 },
      },
    ]),
  ];
}

beforeAll(async () => {
  const gate = () => new Promise<void>((resolve) => (release = resolve));
  claude = await startFakeUpstream({ 'POST /v1/messages': () => ({ sse: forcedSearchStream(gate()) }) });
  router = await startFakeUpstream({
    'POST /v1/chat/completions': () => ({ sse: citationsFirstStream(gate()) }),
  });
  c = await startChatGateway({
    channels: [
      { name: 'claude', kind: 'anthropic', base_url: claude.url, keys: ['sk-ant'], models: ['acme/claude'] },
      {
        name: 'or',
        kind: 'openai-compatible',
        base_url: `${router.url}/v1`,
        keys: ['k'],
        models: ['acme/or'],
      },
    ],
    models: [model('acme/claude'), model('acme/or')],
    gateway: { first_byte_timeout_ms: 30_000 },
  });
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await c?.gw.close();
  await claude?.close();
  await router?.close();
});

/**
 * POSTs a stream request, reads it until `seen` is in what arrived, moves the clock on and lets
 * the upstream go on, then reads the rest.
 */
async function streamPastProgress(path: string, headers: Record<string, string>, body: object, seen: string) {
  const res = await fetch(`${c.gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ stream: true, ...body }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before ${seen}: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const before = text;
  vi.setSystemTime(Date.now() + LATER_MS);
  release();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { before, text };
}

describe("ttft_ms: a server tool's progress is not the first token", () => {
  it('Anthropic web search through /v1/messages: the client sees the search blocks, the first token is the answer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { before, text } = await streamPastProgress(
      '/v1/messages',
      { 'x-api-key': c.key, 'anthropic-version': '2023-06-01' },
      {
        model: 'acme/claude',
        max_tokens: 1024,
        messages: [{ role: 'user', content: 'When was Claude Shannon born?' }],
        tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }],
        tool_choice: { type: 'tool', name: 'web_search' },
      },
      '"web_search_tool_result"',
    );
    // The search went out to the client before the answer: it is shown, but is no token.
    expect(before).toContain('"server_tool_use"');
    expect(before).not.toContain('Based on the search results');
    expect(text).toContain('Claude Shannon was born on April 30, 1916');
    const [log] = await requestLogs(c, '&model=acme/claude');
    expect(log).toMatchObject({ endpoint: 'messages', status: 200, provider: 'claude', stream: true });
    expect(log.ttft_ms).toBe(LATER_MS);
  });

  it('OpenRouter url citations through /v1/chat/completions: shown on their own, the first token is the answer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { before, text } = await streamPastProgress(
      '/v1/chat/completions',
      { authorization: `Bearer ${c.key}` },
      { model: 'acme/or', messages: [{ role: 'user', content: 'When was Claude Shannon born?' }] },
      '"url_citation"',
    );
    expect(before).not.toContain('born on');
    expect(text).toContain('Claude Shannon was born on April 30, 1916.');
    const [log] = await requestLogs(c, '&model=acme/or');
    expect(log).toMatchObject({ endpoint: 'chat.completions', status: 200, provider: 'or', stream: true });
    expect(log.ttft_ms).toBe(LATER_MS);
  });
});

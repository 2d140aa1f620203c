import { describe, expect, it } from 'vitest';
import { FILE_TOKENS } from '../../src/gateway/chat/tokens.js';
import { fakeChatOfFourKinds, model, oaCompletion } from './chat-helpers.js';

/**
 * Video content parts (openrouter.md §2.2: `{type: "video_url", video_url: {url}}`, and the legacy
 * `input_video`) from the client to each upstream kind, asserted on the body the loopback fake
 * received; and the 400 naming the field for a part of the wrong shape.
 */
const CONTEXT = 8_000;

const t = fakeChatOfFourKinds(
  (req) => {
    const body = oaCompletion('a cat video');
    // The small model's upstream reports no usage: the gateway counts the prompt itself.
    if (req.json?.model === 't/small') delete (body as { usage?: unknown }).usage;
    return { json: body };
  },
  {
    oaModels: ['t/small'],
    models: [model('t/small', { context_length: CONTEXT, max_completion_tokens: 1000 })],
  },
);

const chat = (body: Record<string, unknown>, token = t.c.key) =>
  t.c.gw.call('POST', '/v1/chat/completions', { token, body });
/** The one body the upstream received for `body`, and the gateway's answer. */
async function sentFor(body: Record<string, unknown>, token?: string) {
  const before = t.up.requests.length;
  const r = await chat(body, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const sent = t.up.requests.slice(before);
  expect(sent).toHaveLength(1);
  return { sent: sent[0]!.json, answer: r.body, headers: r.headers };
}
const ask = { type: 'text', text: 'What happens in these?' };
const video = (url: string, extra: Record<string, unknown> = {}) => ({
  type: 'video_url',
  video_url: { url, ...extra },
});
const user = (...parts: unknown[]) => [{ role: 'user', content: [ask, ...parts] }];
const MP4 = 'AAAAIGZ0eXBpc29tAAACAGlzb21pc28y';
/** A base64 video of about a megabyte: far more than any context, were it read as text. */
const BIG =
  'data:video/mp4;base64,' + 'AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDEAAAAIZnJlZQ'.repeat(20_000);

describe('OpenAI-compatible upstreams', () => {
  it('get video_url parts as the client sent them (vLLM and OpenRouter take them so)', async () => {
    const parts = [
      video('https://example.com/clip.mp4'),
      video(`data:video/mp4;base64,${MP4}`, { processing: 'static' }),
      video('https://www.youtube.com/watch?v=dQw4w9WgXcQ'),
    ];
    for (const id of ['t/oa', 't/or']) {
      const { sent, answer } = await sentFor({ model: id, messages: user(...parts) });
      expect(answer.choices[0].message.content).toBe('a cat video');
      expect(sent.messages[0].content, id).toEqual([ask, ...parts]);
    }
  });

  it('get the legacy input_video parts as video_url parts', async () => {
    const { sent } = await sentFor({
      model: 't/or',
      messages: user(
        // As @openrouter/sdk sends its LegacyChatContentVideo.
        { type: 'input_video', video_url: { url: 'https://example.com/a.webm' } },
        // The object under the type's own name.
        { type: 'input_video', input_video: { url: `data:video/mp4;base64,${MP4}`, processing: 'agentic' } },
      ),
    });
    expect(sent.messages[0].content).toEqual([
      ask,
      video('https://example.com/a.webm'),
      video(`data:video/mp4;base64,${MP4}`, { processing: 'agentic' }),
    ]);
  });

  it('video beside images and text in system and tool messages passes as images do', async () => {
    const messages = [
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, video('https://example.com/s.mp4')] },
      ...user(video('https://example.com/u.mp4')),
    ];
    const { sent } = await sentFor({ model: 't/oa', messages });
    expect(sent.messages).toEqual(messages);
  });
});

describe('Gemini', () => {
  it('data URLs are inlineData of their type; URLs are fileData, typed from the extension or video/mp4', async () => {
    const { sent, answer } = await sentFor({
      model: 't/ge',
      messages: user(
        video(`data:video/webm;base64,${MP4}`),
        video('https://example.com/clip.mov?sig=1'),
        video('https://www.youtube.com/watch?v=dQw4w9WgXcQ'),
        video('gs://bucket/dir/clip.mpeg'),
        { type: 'input_video', video_url: { url: `data:Video/MP4;base64,${MP4}` } },
      ),
    });
    expect(answer.choices[0].message.content).toBeTruthy();
    expect(sent.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What happens in these?' },
          { inlineData: { mimeType: 'video/webm', data: MP4 } },
          { fileData: { mimeType: 'video/mov', fileUri: 'https://example.com/clip.mov?sig=1' } },
          { fileData: { mimeType: 'video/mp4', fileUri: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' } },
          { fileData: { mimeType: 'video/mpeg', fileUri: 'gs://bucket/dir/clip.mpeg' } },
          { inlineData: { mimeType: 'video/mp4', data: MP4 } },
        ],
      },
    ]);
  });

  it('a video in a system message leads the first user turn, as its images do', async () => {
    const { sent } = await sentFor({
      model: 't/ge',
      messages: [
        {
          role: 'system',
          content: [{ type: 'text', text: 'Be brief.' }, video('https://example.com/s.mp4')],
        },
        { role: 'user', content: 'Summarise.' },
      ],
    });
    expect(sent.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(sent.contents[0].parts).toEqual([
      { fileData: { mimeType: 'video/mp4', fileUri: 'https://example.com/s.mp4' } },
      { text: 'Summarise.' },
    ]);
  });
});

describe('Anthropic (no video input)', () => {
  it('drops the video part, as input_audio; the rest of the turn is sent', async () => {
    const { sent, answer } = await sentFor({
      model: 't/an',
      messages: [
        ...user(video('https://example.com/clip.mp4')),
        { role: 'assistant', content: 'A cat.' },
        { role: 'user', content: [video(`data:video/mp4;base64,${MP4}`)] },
        { role: 'user', content: 'Which colour?' },
      ],
    });
    expect(answer.choices[0].message.content).toBeTruthy();
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What happens in these?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Which colour?' }] },
    ]);
  });
});

describe('local token counts', () => {
  it('a video counts a flat estimate, never its base64 as text: in usage, middle-out and tokens per minute', async () => {
    const key = await t.c.gw.call('POST', '/api/key', {
      cookie: t.c.cookie,
      body: { name: 'tpm', tpm_limit: 20_000 },
    });
    expect(key.status).toBe(200);
    const messages = [
      ...user(video(BIG)),
      { role: 'assistant', content: 'A cat.' },
      { role: 'user', content: [{ type: 'input_video', video_url: { url: BIG } }, ask] },
    ];
    const { sent, answer, headers } = await sentFor(
      { model: 't/small', messages, transforms: ['middle-out'] },
      key.body.data.key,
    );
    // Middle-out kept everything: the prompt fits once the videos are not read as text.
    expect(sent.messages).toHaveLength(3);
    expect(sent.messages[0].content[1].video_url.url).toBe(BIG);
    expect(sent.messages[2].content[0]).toEqual(video(BIG));
    // The upstream reported no usage: counted locally, each video FILE_TOKENS.
    const prompt = answer.usage.prompt_tokens;
    expect(prompt).toBeGreaterThan(2 * FILE_TOKENS);
    expect(prompt).toBeLessThan(2 * FILE_TOKENS + 100);
    // Charged up front against the minute's tokens at the same estimate.
    const charged = 20_000 - Number(headers.get('x-ratelimit-remaining-tokens'));
    expect(charged).toBeGreaterThan(2 * FILE_TOKENS);
    expect(charged).toBeLessThan(2 * FILE_TOKENS + 100);
  });
});

describe('wrong shapes: a 400 naming the field, sent nowhere', () => {
  const at = 'messages.0.content.1';
  const cases: [string, unknown, string][] = [
    ['no video_url', { type: 'video_url' }, `${at}.video_url`],
    ['no url', { type: 'video_url', video_url: {} }, `${at}.video_url.url`],
    ['an empty url', video(''), `${at}.video_url.url`],
    ['a url that is not a string', { type: 'video_url', video_url: { url: 5 } }, `${at}.video_url.url`],
    ['video_url a string', { type: 'video_url', video_url: 'https://example.com/a.mp4' }, `${at}.video_url`],
    ['a legacy input_video without its object', { type: 'input_video' }, `${at}.video_url`],
    ['a legacy input_video without url', { type: 'input_video', video_url: {} }, `${at}.video_url.url`],
    [
      'a legacy input_video with an empty url',
      { type: 'input_video', input_video: { url: '' } },
      `${at}.video_url.url`,
    ],
  ];

  it.each(cases)('%s', async (_what, part, param) => {
    const before = t.up.requests.length;
    for (const id of ['t/oa', 't/ge', 't/an']) {
      const r = await chat({ model: id, messages: user(part) });
      expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.error.param, id).toBe(param);
      expect(r.body.error.message, id).toContain(`${param}:`);
    }
    expect(t.up.requests.length).toBe(before);
  });

  it('an unknown part type is still refused, naming its type', async () => {
    const r = await chat({ model: 't/oa', messages: user({ type: 'video', video: { url: 'x' } }) });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe(`${at}.type`);
  });
});

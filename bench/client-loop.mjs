// Plain JS on a compiled gateway (`buildAll`'s output by default), so compiling this file cannot
// recompile src/ with other options.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The upstream client alone, for `client-instructions.ts`: `n` chat calls, 10 in flight, each
 * read one way:
 * - `text`: a non-streamed answer read whole by `sendText` (the gateway's path);
 * - `send`: the same read by `send` then `text()` (undici's `request()` and its body stream);
 * - `stream`: a streamed answer (the fake upstream's 20 events) opened by `openChatStream` and
 *   read batch by batch, as the streaming route does, on whatever the build at hand does.
 * Usage: node bench/client-loop.mjs <text|send|stream> <n> <upstream> [build dir]
 */
const [mode, count, upstream, buildDir] = process.argv.slice(2);
const build = resolve(buildDir ?? join(import.meta.dirname, 'results/build.tmp'));
const load = (p) => import(pathToFileURL(join(build, 'src', p)).href);
const { ClientGone } = await load('gateway/cancel.js');
const { UpstreamClient } = await load('gateway/upstream/upstream-client.js');
const { openChatStream } = await load('gateway/upstream/call-chat.js');
const { openAiCompatibleAdapter } = await load('providers/openai-compatible/openai-compatible-adapter.js');

const n = Number(count);
const client = new UpstreamClient();
const req = {
  method: 'POST',
  url: `${upstream}/v1/chat/completions`,
  headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
  body: JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hi' }] }),
};
const chat = { model: 'bench/model', messages: [{ role: 'user', content: 'hi' }], stream: true };
const target = { baseUrl: `${upstream}/v1`, apiKey: 'x', upstreamModel: 'bench/model' };
const opts = { connectTimeoutMs: 10_000, firstByteTimeoutMs: 120_000, idleTimeoutMs: 60_000 };
const streamOpts = { ...opts, client };
let started = 0;
let got = 0;
let batches = 0;
async function worker() {
  while (started < n) {
    started++;
    const gone = new ClientGone(); // as the gateway passes one per request
    if (mode === 'text') got += (await client.sendText(req, opts, gone)).text.length;
    else if (mode === 'send') got += (await (await client.send(req, opts, gone)).text()).length;
    else {
      const events = await openChatStream(openAiCompatibleAdapter, chat, target, streamOpts, gone);
      for (let b = await events.next(); b !== null; b = await events.next()) {
        got += b.length;
        batches++;
      }
    }
  }
}
await Promise.all(Array.from({ length: 10 }, worker));
await client.close();
process.stdout.write(
  `${mode} ${n} calls, ${got} ${mode === 'stream' ? `events in ${batches} batches` : 'characters'}\n`,
);

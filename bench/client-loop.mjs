// Plain JS on the compiled gateway (`buildAll`'s output), so compiling this file cannot
// recompile src/ with other options.
import { ClientGone } from './results/build.tmp/src/gateway/cancel.js';
import { UpstreamClient } from './results/build.tmp/src/gateway/upstream/upstream-client.js';

/**
 * The upstream client alone, for `client-instructions.ts`: `n` non-streamed chat calls, 10 in
 * flight, each read whole either by `sendText` (the gateway's path) or by `send` then `text()`
 * (undici's `request()` and its body stream). Usage: node bench/client-loop.mjs <text|send> <n> <upstream>
 */
const [mode, count, upstream] = process.argv.slice(2);
const n = Number(count);
const client = new UpstreamClient();
const req = {
  method: 'POST',
  url: `${upstream}/v1/chat/completions`,
  headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
  body: JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hi' }] }),
};
const opts = { connectTimeoutMs: 10_000, firstByteTimeoutMs: 120_000, idleTimeoutMs: 60_000 };
let started = 0;
let chars = 0;
async function worker() {
  while (started < n) {
    started++;
    const gone = new ClientGone(); // as the gateway passes one per request
    if (mode === 'text') chars += (await client.sendText(req, opts, gone)).text.length;
    else chars += (await (await client.send(req, opts, gone)).text()).length;
  }
}
await Promise.all(Array.from({ length: 10 }, worker));
await client.close();
process.stdout.write(`${mode} ${n} calls, ${chars} characters\n`);

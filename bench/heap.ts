import { setTimeout as sleep } from 'node:timers/promises';
import { cannon, openStreams } from './load.js';
import { buildAll, rssMb } from './procs.js';
import { startStack } from './stack.js';

/**
 * Where the gateway's memory is: RSS and V8's heap spaces (used / committed, from its own
 * /metrics) idle, after saturation load (`--load`: 32 s non-streaming then 32 s streaming, as
 * the harness's scenarios before its memory one), and with 1,000 open streams.
 * Usage: node --import tsx bench/heap.ts [--load] [--no-build] [node flags for the gateway...]
 */
const flags = process.argv
  .slice(2)
  .filter((a) => a.startsWith('--') && !['--load', '--no-build'].includes(a));
if (!process.argv.includes('--no-build')) buildAll();
const stack = await startStack({ built: true, gatewayFlags: flags });
const mb = (b: string) => (Number(b) / 2 ** 20).toFixed(1);
async function report(label: string) {
  const text = await (await fetch(`${stack.gateway.url}/metrics`)).text();
  const space = (kind: string) =>
    new Map(
      [
        ...text.matchAll(new RegExp(`nodejs_heap_space_size_${kind}_bytes\\{space="(\\w+)"\\} (\\d+)`, 'g')),
      ].map((m) => [m[1]!, m[2]!]),
    );
  const used = space('used');
  const total = space('total');
  const spaces = ['new', 'old', 'code', 'large_object']
    .map((s) => `${s} ${mb(used.get(s) ?? '0')}/${mb(total.get(s) ?? '0')}`)
    .join('  ');
  const external = /nodejs_external_memory_bytes (\d+)/.exec(text)?.[1] ?? '0';
  process.stdout.write(
    `${label.padEnd(18)} RSS ${rssMb(stack.gateway.pid).toFixed(0).padStart(4)} MB | heap used/committed MB: ${spaces}  external ${mb(external)}\n`,
  );
}
try {
  const t = stack.target('gateway');
  await report('idle');
  if (process.argv.includes('--load')) {
    for (let i = 0; i < 4; i++) await cannon(t, { stream: false, duration: 8, connections: 50 });
    for (let i = 0; i < 4; i++) await cannon(t, { stream: true, duration: 8, connections: 50 });
    await report('after load');
  }
  await stack.setSlow(1000);
  const s = await openStreams(t, 1000, 30_000);
  let max = 0;
  for (let i = 0; i < 5; i++) {
    max = Math.max(max, rssMb(stack.gateway.pid));
    await sleep(200);
  }
  await report(`${s.opened} streams`);
  process.stdout.write(`max RSS with ${s.opened} open streams: ${max.toFixed(0)} MB\n`);
  s.close();
} finally {
  await stack.close();
}

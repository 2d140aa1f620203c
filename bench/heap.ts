import { setTimeout as sleep } from 'node:timers/promises';
import { cannon, openStreams } from './load.js';
import { buildAll, rssByMapping, rssMb } from './procs.js';
import { startStack } from './stack.js';

/**
 * Where a proxy's memory is: RSS by kind of mapping (file, glibc's brk heap, V8's pages, other
 * anonymous memory) and, for the gateway, V8's heap spaces (used / committed, from its own
 * /metrics), idle, after saturation load (`--load`: 32 s non-streaming then 32 s streaming, as
 * the harness's scenarios before its memory one), and with 1,000 open streams. `--baseline`
 * measures the baseline proxy the same way (RSS only: it has no /metrics).
 * Usage: node --import tsx bench/heap.ts [--load] [--baseline] [--no-build] [node flags for the proxy...]
 */
const OWN = ['--load', '--no-build', '--baseline'];
const flags = process.argv.slice(2).filter((a) => a.startsWith('--') && !OWN.includes(a));
const which = process.argv.includes('--baseline') ? 'baseline' : 'gateway';
if (!process.argv.includes('--no-build')) buildAll();
const stack = await startStack({
  built: true,
  ...(which === 'gateway' ? { gatewayFlags: flags } : { baselineFlags: flags }),
});
const pid = (which === 'gateway' ? stack.gateway : stack.baseline!).pid;
const mb = (b: string) => (Number(b) / 2 ** 20).toFixed(1);
async function heapSpaces(): Promise<string> {
  if (which !== 'gateway') return '';
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
  return ` | heap used/committed MB: ${spaces}  external ${mb(external)}`;
}
async function report(label: string) {
  const where = Object.entries(rssByMapping(pid))
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join('  ');
  process.stdout.write(
    `${label.padEnd(18)} RSS ${rssMb(pid).toFixed(0).padStart(4)} MB${await heapSpaces()}\n${''.padEnd(18)} RSS by mapping MB: ${where}\n`,
  );
}
try {
  const t = stack.target(which);
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
    max = Math.max(max, rssMb(pid));
    await sleep(200);
  }
  await report(`${s.opened} streams`);
  process.stdout.write(`max RSS with ${s.opened} open streams: ${max.toFixed(0)} MB\n`);
  s.close();
} finally {
  await stack.close();
}

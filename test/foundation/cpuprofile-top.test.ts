import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { area, where } from '../../bench/cpuprofile-top.js';
import { ROOT } from '../../bench/procs.js';

const inRepo = (path: string) => pathToFileURL(join(ROOT, path)).href;

// The profile summaries (`npm run bench -- --profile`) name our own code by its source file,
// whichever build ran: `--build` (bench/results/build.tmp) or `npm run build` (dist/). Their
// "inclusive time of src/ functions" section is empty for a build whose paths are not mapped.
describe('cpuprofile-top: where a frame comes from', () => {
  it('names the source file of compiled code in dist/ and in the bench build', () => {
    expect(where(inRepo('dist/src/http/v1/chat-pipeline.js'))).toBe('src/http/v1/chat-pipeline.ts');
    expect(where(inRepo('bench/results/build.tmp/src/store/usage-store.js'))).toBe(
      'src/store/usage-store.ts',
    );
    expect(where(inRepo('bench/results/build.tmp/bench/baseline-proxy.js'))).toBe('bench/baseline-proxy.ts');
  });

  it('keeps other paths and node internals as they are', () => {
    expect(where('node:internal/streams/readable')).toBe('node:internal/streams/readable');
    expect(where(inRepo('node_modules/undici/lib/core/util.js'))).toBe(
      'node_modules/undici/lib/core/util.js',
    );
    expect(where(inRepo('dist/bench/x.js'))).toBe('dist/bench/x.js');
  });

  it('puts compiled src/ frames in their source folder', () => {
    expect(area(inRepo('dist/src/store/usage-store.js'), 'write')).toBe('src/store');
    expect(area(inRepo('node_modules/@fastify/cookie/index.js'), 'x')).toBe('@fastify/cookie');
  });
});

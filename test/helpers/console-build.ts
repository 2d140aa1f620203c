import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, type TestGateway } from './gateway.js';

/**
 * A gateway serving a console build of its own (`server.console_dir`), laid out as Vite writes
 * one: index.html loading /assets/index-abc123.js, and /favicon.svg. Closing it removes the build.
 */
export async function startConsoleGateway(): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script src="/assets/index-abc123.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  const removeBuild = () => rmSync(dir, { recursive: true, force: true });
  let gw: TestGateway;
  try {
    gw = await startTestGateway({ server: { serve_console: true, console_dir: dir } });
  } catch (err) {
    removeBuild();
    throw err;
  }
  return {
    ...gw,
    async close() {
      try {
        await gw.close();
      } finally {
        removeBuild();
      }
    },
  };
}

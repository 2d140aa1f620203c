import { fileURLToPath } from 'node:url';
import { build } from 'vite';

/** Builds web/dist once before the browser tests, so they always test the current sources. */
export default async function setup(): Promise<void> {
  if (process.env.E2E_SKIP_BUILD === '1') return;
  await build({
    configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)),
    logLevel: 'warn',
  });
}

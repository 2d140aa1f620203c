import { fileURLToPath } from 'node:url';
import { build } from 'vite';

/**
 * Builds web/dist once before the browser tests, so they always test the current sources, as
 * `npm run build:web` builds them for production. Vite takes NODE_ENV as it finds it, and vitest
 * sets it to `test`: the console was built with React's development code (StrictMode's second
 * run of every effect, so every page asked its lists twice), not the code that ships.
 */
export default async function setup(): Promise<void> {
  if (process.env.E2E_SKIP_BUILD === '1') return;
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)),
      logLevel: 'warn',
    });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
}

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**', 'dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Under test:pg, fails the run when a test leaves its database behind (test/helpers/pg-run.ts).
    globalSetup: ['test/helpers/pg-run.ts'],
  },
});

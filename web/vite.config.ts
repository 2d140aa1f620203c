import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const gateway = 'http://127.0.0.1:3000';

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed file names let the gateway serve assets with a long cache lifetime.
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
  },
  server: {
    proxy: {
      '/api': { target: gateway, changeOrigin: false },
      '/v1': { target: gateway, changeOrigin: false },
    },
  },
});

import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { defineConfig } from 'vite';

// The explorer's front end: bundled with uPlot into dist/explorer-web, served by src/explorer/server.ts.
// Everything is local (no CDN), so the page works offline.
const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  build: {
    outDir: join(here, '..', '..', '..', 'dist', 'explorer-web'),
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
  },
});

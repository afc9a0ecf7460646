// Builds the three bundles: extension host (node, cjs, `vscode` external), CLI (node), webview (browser).
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const common = {
  bundle: true,
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  absWorkingDir: root,
};

const jobs = [
  {
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // libsql is a native binding loaded at run time (src/core/capture/database.ts); the VSIX carries it.
    external: ['vscode', 'libsql'],
  },
  {
    ...common,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['libsql'],
  },
  {
    ...common,
    entryPoints: ['src/core/tokens/worker.ts'],
    outfile: 'dist/tokens-worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    ...common,
    // Analyses large exchanges and searches large files for split keys off the proxy's event loop
    // (src/core/capture/capture-thread.ts).
    entryPoints: ['src/core/capture/capture-worker.ts'],
    outfile: 'dist/capture-worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    ...common,
    entryPoints: ['src/core/tokens/batch/worker.ts'],
    outfile: 'dist/tokens-batch-worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  {
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'media/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
  {
    ...common,
    entryPoints: ['webview/compare/main.ts'],
    outfile: 'media/compare.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
].filter((j) => existsSync(join(root, j.entryPoints[0])));

await Promise.all(jobs.map((j) => build(j)));

// Codicons ship as a font + css; copy them next to the webview bundle.
const codicons = join(root, 'node_modules/@vscode/codicons/dist');
if (existsSync(codicons)) {
  mkdirSync(join(root, 'media'), { recursive: true });
  cpSync(join(codicons, 'codicon.css'), join(root, 'media/codicon.css'));
  cpSync(join(codicons, 'codicon.ttf'), join(root, 'media/codicon.ttf'));
}
if (!watch) console.log(`built ${jobs.map((j) => j.outfile).join(', ')}`);

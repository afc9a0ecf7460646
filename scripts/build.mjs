// Builds the three bundles: extension host (node, cjs, `vscode` external), CLI (node), webview (browser).
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { Script } from 'node:vm';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
// `--out DIR`: write the bundles under DIR (DIR/dist, DIR/media) instead of the repository (scripts/package.mjs stages a
// production build there, leaving the working tree's dist/ alone).
const outAt = process.argv.indexOf('--out');
const out = outAt > 0 ? resolve(process.argv[outAt + 1]) : root;

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
    // Run by bin/tokenscope.js before dist/cli.js (src/cli/boot.ts): reads a large `lint` FILE before the CLI's code
    // loads, and loads that code from its code cache.
    entryPoints: ['src/cli/boot.ts'],
    outfile: 'dist/cli-boot.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
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
    // How each `tokens --batch` worker starts: compiles dist/tokens-batch-worker.js from the V8 code cache in the data
    // dir (src/core/tokens/batch/worker-boot.ts).
    entryPoints: ['src/core/tokens/batch/worker-boot.ts'],
    outfile: 'dist/tokens-batch-boot.js',
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
]
  .filter((j) => existsSync(join(root, j.entryPoints[0])))
  .map((j) => ({ ...j, outfile: join(out, j.outfile) }));

await Promise.all(jobs.map((j) => build(j)));

// V8 keeps a script's source in memory while it runs, two bytes per character as soon as one character is not ASCII
// (esbuild leaves comments and regex literals as written). The CLI's 3.6 MB bundle, escaped to ASCII, costs half: a
// `\uXXXX` escape means the same in a regex, a template or a comment; an identity escape (`\｜`) becomes the escape.
// The batch worker's bundle likewise: each worker keeps its own copy of the source.
for (const file of ['dist/cli.js', 'dist/tokens-batch-worker.js'].map((f) => join(out, f)).filter((f) => existsSync(f))) {
  const src = readFileSync(file, 'utf8');
  if (!/[^\x00-\x7f]/.test(src)) continue;
  const hex = (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  writeFileSync(
    file,
    src.replace(/(\\*)([^\x00-\x7f])/g, (_, slashes, c) => slashes.slice(slashes.length % 2) + hex(c)),
  );
}

// The CLI's V8 code cache, read by src/cli/boot.ts: compiling the bundle from source is a sixth of a short command's
// time. It starts with the size and modification time of the bundle it was made from, so a cache of another build is
// never used; Node checks that its own version and flags made it.
const cli = join(out, 'dist/cli.js');
rmSync(`${cli}.cache`, { force: true });
if (existsSync(cli) && !watch) {
  const st = statSync(cli);
  const header = Buffer.alloc(16);
  header.writeDoubleLE(st.size, 0);
  header.writeDoubleLE(st.mtimeMs, 8);
  const code = new Script(Module.wrap(readFileSync(cli, 'utf8')), { filename: cli }).createCachedData();
  writeFileSync(`${cli}.cache`, Buffer.concat([header, code]));
}

// Codicons ship as a font + css; copy them next to the webview bundle.
const codicons = join(root, 'node_modules/@vscode/codicons/dist');
if (existsSync(codicons)) {
  mkdirSync(join(out, 'media'), { recursive: true });
  cpSync(join(codicons, 'codicon.css'), join(out, 'media/codicon.css'));
  cpSync(join(codicons, 'codicon.ttf'), join(out, 'media/codicon.ttf'));
}
if (!watch) console.log(`built ${jobs.map((j) => relative(root, j.outfile)).join(', ')}`);

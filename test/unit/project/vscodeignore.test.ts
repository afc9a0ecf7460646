// What .vscodeignore lets into the VSIX, as vsce itself reads it (its listFiles), on a folder laid out like the
// repository after a development build: bundles with their source maps, stale maps in media/, the shipped tokenizer.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { repoRoot } from '../../helpers/shared';

const { listFiles, PackageManager } = require('@vscode/vsce') as {
  listFiles(o: { cwd: string; packageManager: string; ignoreFile: string }): Promise<string[]>;
  PackageManager: { None: string };
};

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-vscodeignore-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('.vscodeignore: the bundles, media, the Kimi tokenizer and its licence go in; no source map, no source, no test', async () => {
  const files = [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/extension.js',
    'dist/extension.js.map',
    'dist/tokens-worker.js',
    'dist/tokens-worker.js.map',
    'dist/capture-worker.js',
    'dist/capture-worker.js.map',
    'dist/cli.js',
    'dist/cli.js.map',
    'media/webview.js',
    'media/webview.js.map',
    'media/webview.css',
    'media/webview.css.map',
    'media/compare.js',
    'media/compare.js.map',
    'media/codicon.css',
    'media/codicon.ttf',
    'media/icon.png',
    'media/tokenscope.svg',
    'media/walkthrough/demo.md',
    'tokenizers/kimi-k2/tiktoken.model',
    'tokenizers/kimi-k2/tokenizer_config.json',
    'tokenizers/kimi-k2/LICENSE',
    'tokenizers/kimi-k2/README.md',
    'src/extension/extension.ts',
    'test/unit/project/vscodeignore.test.ts',
    'scripts/package.mjs',
    'tsconfig.json',
  ];
  for (const f of files) {
    mkdirSync(dirname(join(tmp, f)), { recursive: true });
    writeFileSync(
      join(tmp, f),
      f === 'package.json' ? JSON.stringify({ name: 'x', version: '0.0.0', engines: { vscode: '^1.100.0' } }) : 'x',
    );
  }
  cpSync(join(repoRoot, '.vscodeignore'), join(tmp, '.vscodeignore'));
  const listed = (await listFiles({ cwd: tmp, packageManager: PackageManager.None, ignoreFile: join(tmp, '.vscodeignore') })).sort();
  assert.deepEqual(
    listed.filter((f) => f.endsWith('.map')),
    [],
    'no source map',
  );
  assert.deepEqual(listed, [
    'LICENSE',
    'README.md',
    'dist/capture-worker.js',
    'dist/extension.js',
    'dist/tokens-worker.js',
    'media/codicon.css',
    'media/codicon.ttf',
    'media/compare.js',
    'media/icon.png',
    'media/tokenscope.svg',
    'media/walkthrough/demo.md',
    'media/webview.css',
    'media/webview.js',
    'package.json',
    'tokenizers/kimi-k2/LICENSE',
    'tokenizers/kimi-k2/README.md',
    'tokenizers/kimi-k2/tiktoken.model',
    'tokenizers/kimi-k2/tokenizer_config.json',
  ]);
});

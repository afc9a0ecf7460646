/**
 * The layer rules of `npm run lint` (.dependency-cruiser.cjs) catch what they are there for. A small tree with one
 * breach of each rule, and imports the rules allow beside them, goes through dependency-cruiser with the project's
 * config: every breach is reported, nothing else is.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { repoRoot } from '../../helpers/shared';

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-layers-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const TREE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', strict: true },
    include: ['src', 'webview'],
  }),
  'src/core/model.ts': 'export type Id = string;\n',
  // A lower layer importing a higher one, at run time and for a type only: both break the order.
  'src/core/wire/frame.ts': "import { kept } from '../capture/store';\nexport const frame = kept;\n",
  'src/core/capture/store.ts': "import type { Id } from '../model';\nexport const kept: Id = 'x';\n",
  'src/core/families/kimi.ts': "import type { Stage } from '../proxy/stage';\nexport const kimi: Stage | undefined = undefined;\n",
  'src/core/proxy/stage.ts': "import { kept } from '../capture/store';\nexport type Stage = typeof kept;\n",
  // A higher layer importing a lower one is the normal way.
  'src/core/export/bundle.ts':
    "import { frame } from '../wire/frame';\nimport { kimi } from '../families/kimi';\nexport const bundle = [frame, kimi];\n",
  // src/core without vscode, a file that is not there, a program; a folder in no layer.
  'src/core/tokens/editor.ts':
    "import * as vscode from 'vscode';\nimport { gone } from './missing';\nexport const editor = [vscode, gone];\n",
  'src/core/demo/run.ts': "import { args } from '../../cli/args';\nexport const run = args;\n",
  // A runtime cycle, and a cycle that is type-only one way (allowed).
  'src/core/tokens/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
  'src/core/tokens/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
  'src/core/tokens/p.ts': "import type { Q } from './q';\nexport const p = (q: Q) => q;\n",
  'src/core/tokens/q.ts': "import { p } from './p';\nexport type Q = number;\nexport const q = p;\n",
  'src/core/tokens/lonely.ts': 'export const lonely = 1;\n',
  'src/core/newfolder/thing.ts': "import type { Id } from '../model';\nexport const thing: Id = 'y';\n",
  'src/cli/main.ts':
    "import { shown } from '../extension/view';\nimport { bundle } from '../core/export/bundle';\nimport { thing } from '../core/newfolder/thing';\n" +
    'export const main = [shown, bundle, thing];\n',
  'src/cli/args.ts': 'export const args = 1;\n',
  'src/extension/view.ts':
    "import type { Msg } from '../../webview/protocol';\nimport type { Panel } from '../../webview/panelProtocol';\nimport { dom } from '../../webview/dom';\n" +
    "import { args } from '../cli/args';\nimport { bundle } from '../core/export/bundle';\nexport const shown = (m: Msg, p: Panel) => [m, p, dom, args, bundle];\n",
  'webview/protocol.ts': "import type { Id } from '../src/core/model';\nexport type Msg = { id: Id };\n",
  'webview/panelProtocol.ts': 'export type Panel = { title: string };\n',
  'webview/dom.ts': 'export const dom = 1;\n',
  'webview/main.ts':
    "import type { Msg } from './protocol';\nimport { kept } from '../src/core/capture/store';\nimport type { shown } from '../src/extension/view';\n" +
    'export const show = (m: Msg, s?: typeof shown) => [m, kept, s];\n',
};

for (const [path, text] of Object.entries(TREE)) {
  mkdirSync(dirname(join(tmp, path)), { recursive: true });
  writeFileSync(join(tmp, path), text);
}

test('each layer rule reports its breach, and only its breaches', { timeout: 120_000 }, () => {
  const bin = join(repoRoot, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const r = spawnSync(
    process.execPath,
    [bin, 'src', 'webview', '--config', join(repoRoot, '.dependency-cruiser.cjs'), '--output-type', 'json'],
    {
      cwd: tmp,
      encoding: 'utf8',
      timeout: 110_000,
    },
  );
  assert.ok(r.stdout, `dependency-cruiser printed nothing: ${r.stderr}`);
  const result = JSON.parse(r.stdout) as { summary: { error: number; violations: { rule: { name: string }; from: string; to: string }[] } };
  // A cycle is reported from one of its modules: named here by both ends, in order.
  const shown = (v: (typeof result.summary.violations)[number]) =>
    v.rule.name === 'no-circular' ? `no-circular: ${[v.from, v.to].sort().join(' ↔ ')}` : `${v.rule.name}: ${v.from} → ${v.to}`;
  const got = [...new Set(result.summary.violations.map(shown))].sort();
  assert.deepEqual(got, [
    'cli-not-extension: src/cli/main.ts → src/extension/view.ts',
    'core-in-a-layer: src/cli/main.ts → src/core/newfolder/thing.ts',
    'core-in-a-layer: src/core/newfolder/thing.ts → src/core/model.ts',
    'core-no-programs: src/core/demo/run.ts → src/cli/args.ts',
    'core-no-vscode: src/core/tokens/editor.ts → vscode',
    'extension-not-cli: src/extension/view.ts → src/cli/args.ts',
    'extension-webview-protocol-only: src/extension/view.ts → webview/dom.ts',
    'layer-families: src/core/families/kimi.ts → src/core/proxy/stage.ts',
    'layer-features: src/core/demo/run.ts → src/cli/args.ts',
    'layer-wire: src/core/wire/frame.ts → src/core/capture/store.ts',
    'no-circular: src/core/tokens/a.ts ↔ src/core/tokens/b.ts',
    'no-orphans: src/core/tokens/lonely.ts → src/core/tokens/lonely.ts',
    'not-to-unresolvable: src/core/tokens/editor.ts → ./missing',
    'webview-core-types-only: webview/main.ts → src/core/capture/store.ts',
    'webview-separate: webview/main.ts → src/extension/view.ts',
  ]);
  // Every rule is an error, so `npm run lint` (its default reporter exits non-zero on errors) fails on each.
  assert.equal(result.summary.error, result.summary.violations.length);
});

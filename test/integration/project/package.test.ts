// `npm run package` end to end: VSIX files for this machine's platform and for win32-x64, each checked from its zip
// listing (its own libsql binary and no other, the Kimi K2 tokenizer with its licence, no source maps). This machine's
// VSIX is then unpacked and used as VS Code would: its libsql opens a database, and its token worker, with nothing but
// the VSIX, an empty data dir and the Hub unreachable, tokenizes a Kimi K2 turn with the shipped tokenizer.
//
// No network: the script runs with --offline (binaries from .cache/package/libsql or npm's own cache, where `npm ci`
// left this machine's). The win32-x64 part says "skipped" when its binary was never fetched (`npm run package` once
// fetches every platform's); TOKENSCOPE_PACKAGE_FETCH=1 lets the script fetch it from the npm registry instead.
// About 30 s: one production build, two VSIX.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TokenWorker } from '../../../src/core/tokens/client';
import { repoRoot } from '../../helpers/shared';

const { vsixEntries, vsixRead } = require('../../../scripts/vsix-list.mjs') as {
  vsixEntries(file: string): { name: string; size: number }[];
  vsixRead(file: string, name: string): Buffer | undefined;
};

const NATIVE: Record<string, string> = {
  'linux-x64': 'linux-x64-gnu',
  'linux-arm64': 'linux-arm64-gnu',
  'linux-armhf': 'linux-arm-gnueabihf',
  'alpine-x64': 'linux-x64-musl',
  'alpine-arm64': 'linux-arm64-musl',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64-msvc',
};
const musl =
  process.platform === 'linux' &&
  !(process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;
const HERE = `${musl ? 'alpine' : process.platform}-${process.arch === 'arm' ? 'armhf' : process.arch}`;
const OTHER = HERE === 'win32-x64' ? 'linux-x64' : 'win32-x64';
const version = require('../../../package.json').version as string;

/** Entry names, from `unzip -l` where there is one (a reader independent of the script's), else the script's reader. */
function listing(file: string): string[] {
  const r = spawnSync('unzip', ['-Z1', file], { encoding: 'utf8' });
  if (r.status === 0) return r.stdout.split('\n').filter(Boolean);
  return vsixEntries(file).map((e) => e.name);
}

describe('npm run package', { skip: NATIVE[HERE] ? false : `libsql has no prebuilt binary for ${HERE}`, timeout: 300_000 }, () => {
  const out = mkdtempSync(join(tmpdir(), 'tokenscope-package-'));
  let stdout = '';
  after(() => rmSync(out, { recursive: true, force: true }));

  before(() => {
    const offline = process.env.TOKENSCOPE_PACKAGE_FETCH === '1' ? [] : ['--offline'];
    const r = spawnSync(
      process.execPath,
      [join(repoRoot, 'scripts', 'package.mjs'), ...offline, '--target', `current,${OTHER}`, '--out-dir', out],
      {
        cwd: repoRoot,
        encoding: 'utf8',
        timeout: 280_000,
      },
    );
    stdout = r.stdout;
    assert.equal(r.status, 0, `package.mjs failed:\n${r.stdout}\n${r.stderr}`);
  });

  const vsix = (target: string) => join(out, `tokenscope-${target}-${version}.vsix`);

  function assertContents(target: string): void {
    const names = listing(vsix(target));
    const pkg = NATIVE[target];
    assert.ok(names.includes(`extension/node_modules/@libsql/${pkg}/index.node`), `${target}: its binary`);
    const natives = [...new Set(names.filter((n) => n.startsWith('extension/node_modules/@libsql/')).map((n) => n.split('/')[3]))];
    assert.deepEqual(natives, [pkg], `${target}: no other platform's binary`);
    for (const f of ['tiktoken.model', 'tokenizer_config.json', 'LICENSE', 'README.md'])
      assert.ok(names.includes(`extension/tokenizers/kimi-k2/${f}`), `${target}: tokenizers/kimi-k2/${f}`);
    assert.deepEqual(
      names.filter((n) => n.endsWith('.map')),
      [],
      `${target}: no source map`,
    );
    assert.deepEqual(
      names.filter((n) => /^extension\/(src|test|scripts|bench)\//.test(n)),
      [],
      `${target}: no sources or tests`,
    );
    const licence = vsixRead(vsix(target), 'extension/tokenizers/kimi-k2/LICENSE')!.toString('utf8');
    assert.match(licence, /^Modified MIT License\n\nCopyright \(c\) 2025 Moonshot AI\n/);
    assert.match(vsixRead(vsix(target), 'extension.vsixmanifest')!.toString('utf8'), new RegExp(`TargetPlatform="${target}"`));
  }

  test(`this machine's VSIX (${HERE}) holds its own binary only, the Kimi tokenizer and its licence, no source map`, () => {
    assertContents(HERE);
  });

  test(`another platform's VSIX (${OTHER}) too`, (t) => {
    if (stdout.includes(`skipped ${OTHER}`)) {
      return t.skip(
        `the ${OTHER} binary is not cached here (npm run package fetches it once from the registry; or set TOKENSCOPE_PACKAGE_FETCH=1)`,
      );
    }
    assertContents(OTHER);
  });

  test("this machine's VSIX works as installed: libsql opens a database, the token worker tokenizes Kimi K2 offline", async () => {
    const x = join(out, 'installed');
    for (const { name } of vsixEntries(vsix(HERE))) {
      if (name.endsWith('/')) continue;
      mkdirSync(dirname(join(x, name)), { recursive: true });
      writeFileSync(join(x, name), vsixRead(vsix(HERE), name)!);
    }
    const ext = join(x, 'extension');
    const db = spawnSync(
      process.execPath,
      [
        '-e',
        "const D = require(process.argv[1]); console.log(new D(':memory:').prepare('select 6 * 7 as x').get().x)",
        join(ext, 'node_modules', 'libsql'),
      ],
      { encoding: 'utf8' },
    );
    assert.equal(db.stdout.trim(), '42', db.stderr);

    const port = await new Promise<number>((ok) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(p));
      });
    });
    const saved = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = `http://127.0.0.1:${port}`;
    // No bundledDir: the worker finds tokenizers/ beside its own dist/, as in the installed extension.
    const worker = new TokenWorker(join(ext, 'dist', 'tokens-worker.js'));
    try {
      const nativeText =
        'I will read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a.md"}<|tool_call_end|><|tool_calls_section_end|>';
      const { table } = await worker.tokenTable(
        { model: 'moonshotai/kimi-k2-0905', cacheDir: join(out, 'empty-data'), offline: true },
        { nativeText, model: 'moonshotai/kimi-k2-0905' },
      );
      const ids = Array.from(table.columns.ids);
      assert.ok(ids.includes(163595), `<|tool_calls_section_begin|> is one id: ${ids.join(',')}`);
      assert.deepEqual(ids.slice(0, 5), [40, 748, 2032, 483, 13]);
    } finally {
      await worker.dispose();
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
    }
  });
});

// How the binary starts (src/cli/boot.ts, src/cli/preread.ts): the early read of a large `lint` FILE, taken by
// loadInput only while the file is unchanged, and the CLI's bundle compiled from a code cache only of that bundle.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { CACHE_HEADER, codeCache, loadCli } from '../../../src/cli/boot';
import { preread } from '../../../src/cli/preread';
import { takePreread } from '../../../src/cli/input-head';
import { loadInput } from '../../../src/cli/input';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-boot-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const MB = 1 << 20;
const prose = (c: string) => `Reading it: ${c.repeat(2 * MB)} <|tool_calls_section_begin|>`;

describe('the early read of lint FILE', () => {
  test('a large model-text file is read for `lint`, and only then', () => {
    const text = join(dir, 'out.txt');
    writeFileSync(text, '\ufeff' + prose('a'));
    const cases: [string[], boolean][] = [
      [['lint', '--json', '--family', 'kimi-k2', text], true],
      [['lint', '--no-color', text], true],
      [['lint', '--model', 'x', '--request', 'r.json', text], true],
      [['tokens', text], false],
      [['lint', '--where', 'content', text], false],
      [['lint', '--families'], false],
      [['lint', '--help', text], false],
      [['lint', text, text], false],
      [['lint', '--bogus', text], false],
    ];
    for (const [argv, read] of cases) {
      takePreread();
      preread(argv);
      const p = takePreread();
      assert.equal(p !== undefined, read, argv.join(' '));
      if (p) assert.ok(p.text === prose('a'), 'decoded as TextDecoder decodes it, the byte-order mark dropped');
    }
  });

  test('small files, JSON, SSE, binary and .json files are left to the command', () => {
    const files: [string, string | Buffer][] = [
      ['small.txt', 'Reading it.<|tool_calls_section_begin|>'],
      ['body.txt', JSON.stringify({ choices: [{ message: { content: prose('b') } }] })],
      ['stream.txt', `data: ${JSON.stringify({ x: prose('c') })}\n\n`],
      ['binary.txt', Buffer.concat([Buffer.from([0, 1, 2, 3]), Buffer.alloc(2 * MB, 0x61)])],
      ['out.json', prose('d')],
    ];
    for (const [name, content] of files) {
      writeFileSync(join(dir, name), content);
      takePreread();
      preread(['lint', join(dir, name)]);
      assert.equal(takePreread(), undefined, name);
    }
  });

  test('loadInput takes the early text while the file is unchanged, and reads the file when it changed', async () => {
    const file = join(dir, 'changed.txt');
    const content = async () => (await loadInput(file)).response.message.content ?? '';
    // Whole seconds, so that setting the time again gives the very same modification time.
    const T = 1_700_000_000;
    writeFileSync(file, prose('e'));
    utimesSync(file, T, T);
    preread(['lint', file]);
    // The same size, the same modification time, other bytes: only the early read can give the old text.
    writeFileSync(file, prose('f'));
    utimesSync(file, T, T);
    assert.ok((await content()) === prose('e'), 'the early text');
    assert.equal(takePreread(), undefined, 'taken');

    preread(['lint', file]);
    writeFileSync(file, prose('g'));
    utimesSync(file, T, T + 5);
    assert.ok((await content()) === prose('g'), 'the file as it is now');

    // An early read of another file is dropped, not kept.
    preread(['lint', file]);
    const other = join(dir, 'other.txt');
    writeFileSync(other, 'just text');
    assert.equal((await loadInput(other)).response.message.content, 'just text');
    assert.equal(takePreread(), undefined);
  });
});

describe('the CLI bundle from its code cache', () => {
  const bundleDir = join(dir, 'dist');
  const bundle = join(bundleDir, 'cli.js');
  const source = `"use strict";\nconst { join } = require("node:path");\nmodule.exports = { runFromProcess() {}, file: __filename, dir: __dirname, joined: join(__dirname, "x"), strict: (function () { return this === undefined; })() };\n`;
  const writeCache = (size: number, mtimeMs: number) => {
    const header = Buffer.alloc(CACHE_HEADER);
    header.writeDoubleLE(size, 0);
    header.writeDoubleLE(mtimeMs, 8);
    writeFileSync(`${bundle}.cache`, Buffer.concat([header, new Script(Module.wrap(source), { filename: bundle }).createCachedData()]));
  };

  test('a cache made from the bundle as it is is used; one of another build is not', () => {
    mkdirSync(bundleDir, { recursive: true });
    writeFileSync(bundle, source);
    assert.equal(codeCache(bundle), undefined, 'no cache');
    const st = statSync(bundle);
    writeCache(st.size, st.mtimeMs);
    assert.ok(codeCache(bundle), 'the cache of this bundle');
    const cli = loadCli(bundleDir) as unknown as Record<string, unknown>;
    assert.deepEqual(cli, { runFromProcess: cli.runFromProcess, file: bundle, dir: bundleDir, joined: join(bundleDir, 'x'), strict: true });
    writeCache(st.size, st.mtimeMs + 1);
    assert.equal(codeCache(bundle), undefined, 'a cache of an older bundle');
    writeCache(st.size + 1, st.mtimeMs);
    assert.equal(codeCache(bundle), undefined, 'a cache of a bundle of another size');
  });
});

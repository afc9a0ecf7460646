// `tokens --batch` workers started through their boot (dist/tokens-batch-boot.js): the worker bundle is compiled from
// the V8 code cache in the data dir when one of this bundle is there and whole; a run without one writes it; a cache
// that is damaged, of another bundle or refused by V8 is passed over without a word and replaced. Whatever the cache
// and the number of workers, the output is the same bytes.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build } from 'esbuild';
import { CODE_CACHE_HEADER, codeCacheFile, readCodeCache, writeCodeCache } from '../../../src/core/tokens/batch/code-cache';
import { runBatch, type BatchRunOptions } from '../../../src/core/tokens/batch/run';
import { RECORDINGS, recording } from '../../helpers/shared';
import { KIMI_SAMPLE_TURNS, MULTILINGUAL_SAMPLES } from './corpus';
import { kimiTokenizerDir } from './helpers';

const root = join(__dirname, '..', '..', '..');
const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-code-cache-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('the code cache file', () => {
  const bundle = join(tmp, 'bundle.js');
  const file = join(tmp, 'files', 'code-cache', 'bundle.v8');
  before(() => writeFileSync(bundle, 'module.exports = 1;\n'));

  test('is read back only while the bundle is unchanged and the data whole', () => {
    writeCodeCache(file, bundle, Buffer.from('v8 data'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(file, '..')).mode & 0o777, 0o700);
    assert.equal(readCodeCache(file, bundle)?.toString(), 'v8 data');
    // A damaged byte in the data: the checksum no longer matches.
    const bytes = readFileSync(file);
    bytes[CODE_CACHE_HEADER + 1] ^= 0xff;
    writeFileSync(file, bytes);
    assert.equal(readCodeCache(file, bundle), undefined, 'damaged data');
    writeFileSync(file, bytes.subarray(0, CODE_CACHE_HEADER - 3));
    assert.equal(readCodeCache(file, bundle), undefined, 'a cut file');
    writeCodeCache(file, bundle, Buffer.from('v8 data'));
    utimesSync(bundle, new Date(), new Date(Date.now() + 5000));
    assert.equal(readCodeCache(file, bundle), undefined, 'a cache of the bundle before it changed');
    assert.equal(readCodeCache(join(tmp, 'none.v8'), bundle), undefined, 'no cache');
  });

  test('is one file per bundle, Node version and architecture, in the data dir', () => {
    const a = codeCacheFile(join(tmp, 'data'), '/x/dist/tokens-batch-worker.js');
    assert.match(a, /code-cache[/\\]tokens-batch-worker-[0-9a-f]{24}\.v8$/);
    assert.ok(a.startsWith(join(tmp, 'data')));
    assert.equal(codeCacheFile(join(tmp, 'data'), '/x/dist/tokens-batch-worker.js'), a);
    assert.notEqual(codeCacheFile(join(tmp, 'data'), '/y/dist/tokens-batch-worker.js'), a);
  });
});

const found = kimiTokenizerDir();
const recs = RECORDINGS.map((n) => recording(n));
const skip = 'skip' in found ? found.skip : recs.some((r) => !r) ? 'shared recordings not found (../shared/recordings)' : false;

/**
 * A mixed corpus: answers of every recorded family (JSON bodies, streams as request/response pairs), Kimi markup and
 * many scripts in the content, datasets, blank, CRLF and bad lines.
 */
function mixedLines(): string[] {
  const base: string[] = [];
  for (const r of recs) {
    const request = r!.files['request.json'] ? JSON.parse(r!.files['request.json']) : undefined;
    if (r!.files['response.json']) {
      const response = JSON.parse(r!.files['response.json']);
      base.push(JSON.stringify(response));
      if (request) base.push(JSON.stringify({ dataset: 'pairs', request, response }));
    } else base.push(JSON.stringify({ dataset: 'streams', request, response: r!.files['stream.sse'] }));
  }
  [...KIMI_SAMPLE_TURNS, ...MULTILINGUAL_SAMPLES].forEach((content, i) => {
    const completion = {
      id: `gen-${i}`,
      object: 'chat.completion',
      model: 'moonshotai/kimi-k2-0905',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 },
    };
    base.push(JSON.stringify({ ...completion, dataset: `text-${i % 3}` }));
  });
  base.push('{"not": "a completion"', '', '[1, 2]', '   ');
  const lines: string[] = [];
  // Enough lines for a cache to be written (at least 200 on one worker), and chunks on every worker.
  for (let i = 0; i < 520; i++) lines.push(base[(i * 7) % base.length] + (i % 50 === 3 ? '\r' : ''));
  return lines;
}

/** Byte equality, said by the first line that differs (not two whole outputs). */
function sameBytes(actual: string, expected: string, message: string): void {
  if (actual === expected) return;
  const [a, e] = [actual.split('\n'), expected.split('\n')];
  const at = a.findIndex((l, i) => l !== e[i]);
  assert.fail(`${message}: ${a.length} lines vs ${e.length}; line ${at + 1} differs:\n${a[at]?.slice(0, 300)}\n${e[at]?.slice(0, 300)}`);
}

describe('tokens --batch workers compiled from the code cache', { skip }, () => {
  const kimiDir = 'dir' in found ? found.dir : '';
  const workerFile = join(tmp, 'dist', 'tokens-batch-worker.js');
  const boot = join(tmp, 'dist', 'tokens-batch-boot.js');
  const input = join(tmp, 'mixed.jsonl');
  let reference = '';
  let referenceSummary = '';

  /** One run; its output bytes, summary and code-cache state. */
  async function run(workers: number, cacheDir: string, extra: Partial<BatchRunOptions> = {}) {
    const output = join(tmp, `out-${workers}-${Math.random().toString(36).slice(2)}.jsonl`);
    const r = await runBatch({ input, output, workers, workerFile, tokenizerDir: kimiDir, cacheDir, chunkLines: 32, ...extra });
    const out = readFileSync(output, 'utf8');
    rmSync(output);
    return { out, summary: JSON.stringify(r.summary.toJSON()), codeCache: r.codeCache };
  }

  before(async () => {
    // Bundled as scripts/build.mjs bundles dist/: the worker and its boot side by side.
    const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' } as const;
    await build({ ...common, entryPoints: [join(root, 'src/core/tokens/batch/worker.ts')], outfile: workerFile });
    await build({ ...common, entryPoints: [join(root, 'src/core/tokens/batch/worker-boot.ts')], outfile: boot });
    writeFileSync(input, mixedLines().join('\n') + '\n');
    // The reference: one worker loading its bundle directly, as before the boot.
    const r = await run(1, join(tmp, 'data-plain'));
    assert.equal(r.codeCache, undefined);
    reference = r.out;
    referenceSummary = r.summary;
    const s = JSON.parse(r.summary) as { lines: { processed: number; bad: number; blank: number } };
    assert.ok(s.lines.bad > 0 && s.lines.blank > 0 && s.lines.processed > 400, r.summary.slice(0, 200));
  });

  test('1, 2 and 3 workers write the same bytes, from source and from the cache', async () => {
    const data = join(tmp, 'data-same');
    const first = await run(2, data, { boot });
    assert.deepEqual(first.codeCache, { loaded: 0, saved: true }, 'no cache yet: this run writes it');
    const file = codeCacheFile(data, workerFile);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    sameBytes(first.out, reference, 'the run that writes the cache');
    for (const workers of [1, 2, 3]) {
      const r = await run(workers, data, { boot });
      assert.deepEqual(r.codeCache, { loaded: workers, saved: false }, `${workers} worker(s) compiled from the cache`);
      sameBytes(r.out, reference, `${workers} worker(s): the same bytes`);
      assert.equal(r.summary, referenceSummary, `${workers} worker(s): the same summary`);
    }
    const plain = await run(3, join(tmp, 'data-plain'));
    sameBytes(plain.out, reference, '3 workers without the boot');
    const lines = reference.split('\n');
    assert.ok(
      lines.length > 400 && lines.every((l, i) => (l === '' ? i === lines.length - 1 : JSON.parse(l).line > 0)),
      'whole JSON lines',
    );
  });

  test('a damaged cache, one of another bundle, or one V8 refuses is passed over and replaced', async () => {
    const data = join(tmp, 'data-bad');
    const file = codeCacheFile(data, workerFile);
    assert.equal((await run(1, data, { boot })).codeCache?.saved, true);
    const good = readFileSync(file);

    // A flipped byte in the V8 data.
    const damaged = Buffer.from(good);
    damaged[damaged.length - 10] ^= 0xff;
    writeFileSync(file, damaged);
    let r = await run(2, data, { boot });
    assert.deepEqual(r.codeCache, { loaded: 0, saved: true });
    sameBytes(r.out, reference, 'a damaged cache');
    assert.equal((await run(2, data, { boot })).codeCache?.loaded, 2, 'the cache written instead is used');

    // Whole, checksum right, but not V8's code cache (another Node, other flags): V8 refuses it, the source is compiled.
    mkdirSync(join(file, '..'), { recursive: true });
    writeCodeCache(file, workerFile, Buffer.alloc(4096, 7));
    r = await run(2, data, { boot });
    assert.deepEqual(r.codeCache, { loaded: 0, saved: true });
    sameBytes(r.out, reference, 'a cache V8 refuses');

    // Made from the bundle before it changed (another build).
    const copy = join(tmp, 'dist', 'tokens-batch-worker.copy.js');
    copyFileSync(workerFile, copy);
    writeFileSync(workerFile, readFileSync(copy, 'utf8') + '\n// rebuilt\n');
    try {
      r = await run(2, data, { boot });
      assert.deepEqual(r.codeCache, { loaded: 0, saved: true });
      sameBytes(r.out, reference, 'a cache of the bundle before it changed');
    } finally {
      copyFileSync(copy, workerFile);
    }
    // The cache written for the other bundle is not used for this one (its size and time are in the file).
    r = await run(1, data, { boot });
    assert.deepEqual(r.codeCache, { loaded: 0, saved: true });
  });

  test('a short run writes no cache; a data dir that cannot hold it costs a warning, nothing else', async () => {
    const data = join(tmp, 'data-short');
    const short = join(tmp, 'short.jsonl');
    writeFileSync(short, readFileSync(input, 'utf8').split('\n').slice(0, 100).join('\n') + '\n');
    const output = join(tmp, 'short.out.jsonl');
    const r = await runBatch({ input: short, output, workers: 1, workerFile, boot, tokenizerDir: kimiDir, cacheDir: data });
    assert.deepEqual(r.codeCache, { loaded: 0, saved: false });
    assert.equal(existsSync(codeCacheFile(data, workerFile)), false);
    assert.equal(
      readFileSync(output, 'utf8'),
      reference
        .split('\n')
        .filter((l) => l && JSON.parse(l).line <= 100)
        .map((l) => l + '\n')
        .join(''),
    );

    // `code-cache` is a file there, not a folder: no cache can be written (whoever runs the test, root included).
    const ro = join(tmp, 'data-ro');
    mkdirSync(ro);
    writeFileSync(join(ro, 'code-cache'), '');
    const warnings: string[] = [];
    const w = await run(2, ro, { boot, onWarning: (m) => warnings.push(m) });
    sameBytes(w.out, reference, 'a data dir without room for the cache');
    assert.deepEqual(w.codeCache, { loaded: 0, saved: false });
    assert.equal(warnings.filter((m) => /could not write the code cache/.test(m)).length, 1, warnings.join('; '));
  });

  test('the Kimi K2 tokenizer Tokenscope ships is found for --model, offline, with an empty data dir', async () => {
    const data = join(tmp, 'data-shipped');
    const model = 'moonshotai/kimi-k2-0905';
    const shipped = await run(2, data, { boot, tokenizerDir: undefined, model, offline: true });
    const named = await run(1, join(tmp, 'data-named'), { model });
    // The same records as with --tokenizer-dir naming the folder, but for the note on the missing chat template
    // (which says where it looked).
    const records = (out: string) =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => ({ ...JSON.parse(l), prompt_skipped: undefined }));
    assert.deepEqual(records(shipped.out), records(named.out));
    assert.equal(shipped.out.split('\n').filter(Boolean).length, reference.split('\n').filter(Boolean).length, 'every good line tokenized');
    assert.equal(existsSync(join(data, 'tokenizers', 'moonshotai')), false, 'nothing downloaded');
  });
});

// The tokenizer hand-over of `tokens --batch`: the runner loads the rank table once into shared memory and every
// worker encodes with that one table (no worker reads, checks or warns about the rank cache itself), and the output
// of 1 and of 2 workers is the same, byte for byte, as this thread's own processing of the lines.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build } from 'esbuild';
import { BatchProcessor } from '../../../src/core/tokens/batch/process';
import { runBatch } from '../../../src/core/tokens/batch/run';
import { shareBatchRanks } from '../../../src/core/tokens/batch/shared-ranks';
import { adoptSharedRanks, loadRanks, shareRanks } from '../../../src/core/tokens/rank-cache';
import { localTokenizerDir } from '../../../src/core/tokens/resolve';
import { recording } from '../../helpers/shared';
import { kimiTokenizerDir } from './helpers';

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-shared-ranks-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('shared rank tables', () => {
  test('an adopted table is used while its rank file is unchanged, and not after', () => {
    const dir = join(tmp, 'small');
    mkdirSync(dir);
    const file = join(dir, 'tiktoken.model');
    writeFileSync(file, 'YQ== 0\nYg== 1\nYWI= 2\n');
    const shared = shareRanks(file, join(tmp, 'small-cache'));
    assert.ok(shared.table.buffer instanceof SharedArrayBuffer);
    // A structured clone, as a worker receives it: the same memory.
    const received = structuredClone(shared);
    adoptSharedRanks([received]);
    const t = loadRanks(file, join(tmp, 'small-cache'));
    assert.equal(t.bytes.buffer, received.table.buffer, 'the table is read from the shared memory');
    assert.deepEqual(Array.from(t.offsets), [0, 1, 2, 4]);
    assert.equal(Buffer.from(t.bytes).toString(), 'abab');
    // The rank file changes: it is read again, not taken from the stale table.
    writeFileSync(file, 'YQ== 0\nYg== 1\nYWI= 2\nYmE= 3\n');
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const fresh = loadRanks(file, join(tmp, 'small-cache'));
    assert.ok(!(fresh.bytes.buffer instanceof SharedArrayBuffer));
    assert.deepEqual(Array.from(fresh.offsets), [0, 1, 2, 4, 6]);
  });

  test('nothing is shared when the options name no tiktoken tokenizer there, or a broken one', () => {
    assert.deepEqual(shareBatchRanks({}), []);
    assert.deepEqual(shareBatchRanks({ model: 'moonshotai/kimi-dev-72b', cacheDir: join(tmp, 'empty-data') }), [], 'not downloaded yet');
    assert.deepEqual(
      shareBatchRanks({ model: 'deepseek/deepseek-chat-v3.1', cacheDir: join(tmp, 'empty-data') }),
      [],
      'not a tiktoken tokenizer',
    );
    const bad = join(tmp, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'tiktoken.model'), 'not a rank file\n');
    assert.deepEqual(shareBatchRanks({ tokenizerDir: bad }), []);
  });

  test('a downloaded tiktoken tokenizer named by --model is shared', () => {
    const data = join(tmp, 'data-model');
    const repoDir = join(data, 'tokenizers', 'moonshotai', 'Kimi-Dev-72B');
    mkdirSync(repoDir, { recursive: true });
    writeFileSync(join(repoDir, 'tiktoken.model'), 'YQ== 0\n');
    writeFileSync(join(repoDir, 'tokenizer_config.json'), '{}');
    const [shared] = shareBatchRanks({ model: 'moonshotai/kimi-dev-72b', cacheDir: data });
    assert.equal(shared?.source.path, join(repoDir, 'tiktoken.model'));
  });

  test('the tokenizer Tokenscope ships for --model is shared', (t) => {
    const shipped = localTokenizerDir({ model: 'moonshotai/kimi-k2-0905' });
    if (!shipped) return t.skip('no shipped Kimi tokenizer in this checkout (tokenizers/kimi-k2)');
    const [shared] = shareBatchRanks({ model: 'moonshotai/kimi-k2-0905', cacheDir: join(tmp, 'data-shipped') });
    assert.equal(shared?.source.path, resolve(shipped, 'tiktoken.model'));
    assert.equal(shared.table.count, 163_584);
  });
});

const found = kimiTokenizerDir();
const json = recording('17-kimi-fantasy-openrouter-tool-json');
const prose = recording('23-kimi-fantasy-k25-prose-only');
const skip = 'skip' in found ? found.skip : !json || !prose ? 'shared recordings not found (../shared/recordings)' : false;

describe('tokens --batch workers share the runner’s rank table', { skip }, () => {
  const kimiDir = 'dir' in found ? found.dir : '';
  const workerFile = join(tmp, 'tokens-batch-worker.js');
  const input = join(tmp, 'in.jsonl');
  before(async () => {
    await build({
      entryPoints: [join(__dirname, '..', '..', '..', 'src', 'core', 'tokens', 'batch', 'worker.ts')],
      outfile: workerFile,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'warning',
    });
    const resp = JSON.parse(json!.files['response.json']);
    const lines = [
      JSON.stringify(resp),
      JSON.stringify(JSON.parse(prose!.files['response.json'])),
      JSON.stringify({ dataset: 'tools', request: JSON.parse(json!.files['request.json']), response: resp }),
    ];
    writeFileSync(input, Array.from({ length: 150 }, (_, i) => lines[i % lines.length]).join('\n') + '\n');
  });

  test('with an unwritable cache, the one warning is the runner’s: no worker loads the table itself', async () => {
    // A copy of the tokenizer folder, so no rank-cache entry exists for it anywhere: every load parses the rank file.
    const dir = join(tmp, 'kimi');
    mkdirSync(dir);
    for (const f of ['tiktoken.model', 'tokenizer_config.json']) copyFileSync(join(kimiDir, f), join(dir, f));
    const blocker = join(tmp, 'not-a-folder');
    writeFileSync(blocker, '');
    const outputs: string[] = [];
    for (const workers of [1, 2]) {
      const warnings: string[] = [];
      const output = join(tmp, `out-${workers}.jsonl`);
      const r = await runBatch({
        input,
        output,
        workers,
        workerFile,
        tokenizerDir: dir,
        cacheDir: join(blocker, 'data'),
        chunkLines: 16,
        onWarning: (m) => warnings.push(m),
      });
      assert.equal(r.summary.bad, 0);
      assert.equal(r.summary.lines, 150);
      assert.equal(
        warnings.filter((w) => /tokenizer cache/.test(w)).length,
        1,
        `${workers} worker(s): one load, one warning (${warnings.join('; ')})`,
      );
      outputs.push(readFileSync(output, 'utf8'));
    }
    assert.equal(outputs[0], outputs[1], '1 and 2 workers write the same bytes');
  });

  test('1 and 2 workers write the same bytes as this thread processing the lines alone', async () => {
    const outs: string[] = [];
    for (const workers of [2, 1]) {
      const output = join(tmp, `same-${workers}.jsonl`);
      await runBatch({ input, output, workers, workerFile, tokenizerDir: kimiDir, cacheDir: join(tmp, 'data'), chunkLines: 8 });
      outs.push(readFileSync(output, 'utf8'));
    }
    assert.equal(outs[0], outs[1], '1 and 2 workers');
    // This thread, with a tokenizer of its own (no hand-over).
    const processor = new BatchProcessor({ tokenizerDir: kimiDir, cacheDir: join(tmp, 'data-alone') });
    const lines = readFileSync(input, 'utf8').split('\n').slice(0, -1);
    let alone = '';
    for (let i = 0; i < lines.length; i++) {
      const r = await processor.process(i + 1, lines[i]);
      assert.ok(r.out, r.error);
      alone += r.out + '\n';
    }
    assert.equal(outs[0], alone);
  });
});

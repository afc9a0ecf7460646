// Command-line faults users hit (issue #16): bad counts, missing or unusable folders, unsafe route names.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { exportToFile } from '../../../src/core/export/index';
import { prepareRepro } from '../../../src/core/export/repro';
import { brokenKimiCapture } from '../../fixtures/export/captures';
import { repoRoot } from '../../helpers/shared';
import { exited, rawRequest, serveChild, startUpstream, tempDir } from '../../unit/proxy/local-upstream';

function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  return main(argv, { out: (t) => (out += t.endsWith('\n') ? t : t + '\n'), err: (t) => (err += t.endsWith('\n') ? t : t + '\n') }).then(
    (code) => ({ code, out, err }),
  );
}

test('captures --limit must be a positive whole number; tail -n is bounded too', async () => {
  const tmp = tempDir();
  try {
    const tail = await cli(['tail', '-n', '1000000000', '--data-dir', tmp.dir]);
    assert.equal(tail.code, 2);
    assert.match(tail.err, /-n must be a whole number of exchanges from 0 to 1,000,000/);
    for (const bad of ['-5', '0', '1.5', 'x']) {
      const r = await cli(['captures', '--data-dir', tmp.dir, '--limit', bad]);
      assert.equal(r.code, 2, bad);
      assert.match(r.err, /--limit must be a (positive whole number|number)/, bad);
    }
  } finally {
    tmp.remove();
  }
});

test('read-only commands never create a missing --data-dir, and say there is nothing there', async () => {
  const tmp = tempDir();
  const missing = join(tmp.dir, 'nope');
  try {
    const list = await cli(['captures', '--data-dir', missing]);
    assert.equal(list.code, 0);
    assert.match(list.out, /^no captures in .*nope/);
    assert.equal((await cli(['captures', '--data-dir', missing, '--json'])).out.trim(), '[]');
    const show = await cli(['show', 'abc', '--data-dir', missing]);
    assert.equal(show.code, 2);
    assert.match(show.err, /^tokenscope show: no capture with id "abc": there is no capture store in .*nope/);
    const exp = await cli(['export', 'abc', '--data-dir', missing, '-o', join(tmp.dir, 'x.md'), '--format', 'markdown']);
    assert.equal(exp.code, 2);
    assert.match(exp.err, /no capture store/);
    assert.equal(existsSync(missing), false, 'the folder was not created');
  } finally {
    tmp.remove();
  }
});

test('a --data-dir that is a file is one plain line, not errno text', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'file');
  writeFileSync(file, 'x');
  try {
    for (const argv of [
      ['captures', '--data-dir', file],
      ['show', 'abc', '--data-dir', file],
      ['captures', '--data-dir', join(file, 'sub')],
    ]) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.err, /is a file, not a folder/, argv.join(' '));
      assert.doesNotMatch(r.err, /ENOTDIR|EISDIR|EEXIST/, argv.join(' '));
      assert.equal(r.err.trim().split('\n').length, 1);
    }
  } finally {
    tmp.remove();
  }
});

test('a file or folder where an output or input file belongs is a plain line, never ENOTDIR or EISDIR', async (t) => {
  // tokens --batch opens its output before it starts the workers: the built worker only has to exist.
  const worker = join(repoRoot, 'dist', 'tokens-batch-worker.js');
  const batch = existsSync(worker);
  if (batch) process.env.TOKENSCOPE_BATCH_WORKER = worker;
  else t.diagnostic('skipped the tokens --batch cases: dist/tokens-batch-worker.js is not built (npm run build)');
  const tmp = tempDir();
  const file = join(tmp.dir, 'file');
  writeFileSync(file, 'x');
  const input = join(tmp.dir, 'in.jsonl');
  writeFileSync(input, '{"model":"m","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}\n');
  try {
    for (const [argv, msg] of [
      ...((batch
        ? [
            [
              ['tokens', '--batch', input, '--out', join(file, 'o.jsonl'), '--offline'],
              /cannot write .*o\.jsonl: a folder on its path is a file$/,
            ],
            [['tokens', '--batch', input, '--out', tmp.dir, '--offline'], /cannot write .*: it is a directory$/],
          ]
        : []) as [string[], RegExp][]),
      [['serve', '--port', '0', '--data-dir', tmp.dir, '--policy', tmp.dir], /cannot read the policy file .*: it is a directory$/],
      [
        ['serve', '--port', '0', '--data-dir', tmp.dir, '--policy', join(file, 'p.json')],
        /cannot read the policy file .*: a folder on its path is a file$/,
      ],
      [['lint', '--request', tmp.dir, input], /is a directory/],
    ] as [string[], RegExp][]) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.err.trim(), msg, argv.join(' '));
      // The temporary folder's random name can hold capitals (`-EFACtm`): only the rest of the line is judged.
      assert.doesNotMatch(r.err.replaceAll(tmp.dir, ''), /E[A-Z]{3,}/, argv.join(' '));
      assert.equal(r.err.trim().split('\n').length, 1, r.err);
    }
  } finally {
    delete process.env.TOKENSCOPE_BATCH_WORKER;
    tmp.remove();
  }
});

test('export -o under a file names the problem, not the temporary file Node failed on', () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'file');
  writeFileSync(file, 'x');
  try {
    assert.throws(
      () => exportToFile([prepareRepro(brokenKimiCapture(), { tokenscopeVersion: '0.0.0' })], 'markdown', join(file, 'x.md')),
      (e: Error) => {
        assert.equal(e.message, `cannot write ${join(file, 'x.md')}: a folder on its path is a file`);
        return true;
      },
    );
  } finally {
    tmp.remove();
  }
});

test('serve refuses an unusable --custom name or timeout before it starts', async () => {
  for (const [argv, msg] of [
    [['--custom', '__proto__=http://127.0.0.1:1'], /"__proto__" is not a usable upstream name/],
    [['--custom', 'a/b=http://127.0.0.1:1'], /not a usable upstream name/],
    [['--custom', 'lab'], /--custom expects NAME=URL/],
    [['--idle-timeout', '0'], /--idle-timeout must be a number of seconds above 0/],
    [['--max-body-mb', '100000'], /--max-body-mb must be a number above 0 and at most 1024, got 100000/],
  ] as [string[], RegExp][]) {
    const r = await cli(['serve', '--port', '0', ...argv]);
    assert.equal(r.code, 2, argv.join(' '));
    assert.match(r.err, msg, argv.join(' '));
  }
});

test('serve --custom openrouter=URL routes /openrouter there, as it prints', async () => {
  const seen: string[] = [];
  const up = await startUpstream((req, res) => {
    seen.push(req.url!);
    req.resume();
    res.end('{"data":[]}');
  });
  const data = tempDir();
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, '--custom', `openrouter=${up.url}/mine?k=1`]);
  try {
    assert.match(s.output(), new RegExp(`/openrouter {2}→ ${up.url}/mine\\?k=1`));
    const res = await rawRequest(`${s.url}/openrouter/v1/models`);
    assert.equal(res.status, 200);
    assert.deepEqual(seen, ['/mine/v1/models?k=1']);
  } finally {
    s.child.kill('SIGTERM');
    await exited(s.child);
    await up.close();
    data.remove();
  }
});

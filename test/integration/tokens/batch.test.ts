import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { main } from '../../../src/cli/main';
import { cli } from '../../helpers/cli-main';
import { writeBundle } from '../../../src/core/export/bundle';
import { prepareRepro } from '../../../src/core/export/repro';
import { brokenKimiCapture } from '../../fixtures/export/captures';
import { recording, repoRoot } from '../../helpers/shared';
import { kimiTokenizerDir } from '../../unit/tokens/helpers';
import { TS_LOADER } from '../../helpers/ts-loader';
import { useBuiltBatchWorker } from '../../helpers/batch-worker';

const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-batch-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const kimi = kimiTokenizerDir();
const dir = 'dir' in kimi ? kimi.dir : '';
const workerFile = join(tmp, 'tokens-batch-worker.js');

const run = (...argv: string[]) => cli('tokens', ...argv);

function file(name: string, body: string): string {
  const p = join(tmp, name);
  writeFileSync(p, body);
  return p;
}

interface OutLine {
  line: number;
  id: string | null;
  family: string | null;
  source: string;
  completion_ids: number[];
  prompt_ids: number[] | null;
  accounting: { completion: { counted: number; billed: number | null; delta: number | null } };
  findings: { rule: string }[];
}

const readOut = (p: string): OutLine[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutLine);

/**
 * A mixed input: every line kind, each with the single-response `tokens` invocation that must give the same ids.
 * `null` marks a bad line (with the reason the summary must give).
 */
function mixedInput(): { lines: string[]; singles: (string[] | { bad: RegExp })[] } | undefined {
  const json = recording('17-kimi-fantasy-openrouter-tool-json');
  const stream = recording('18-kimi-fantasy-openrouter-tool-stream');
  const prose = recording('23-kimi-fantasy-k25-prose-only');
  if (!json || !stream || !prose) return undefined;
  const resp17 = json.files['response.json'];
  const req17 = json.files['request.json'];
  const bundleText = writeBundle(prepareRepro(brokenKimiCapture(), { tokenscopeVersion: '0.0.0' }));
  const lines = [
    JSON.stringify(JSON.parse(resp17)),
    '{"choices": [',
    JSON.stringify({ dataset: 'tools', request: JSON.parse(req17), response: JSON.parse(resp17) }),
    JSON.stringify({ dataset: 'tools', request: JSON.parse(stream.files['request.json']), response: stream.files['stream.sse'] }),
    '',
    JSON.stringify(JSON.parse(bundleText)),
    JSON.stringify({ object: 'list', data: [] }),
    JSON.stringify({ dataset: 'prose', response: JSON.parse(prose.files['response.json']) }),
  ];
  const t = ['--tokenizer-dir', dir, '--json'];
  const singles = [
    [...t, file('17.json', resp17)],
    { bad: /not valid JSON/ },
    [...t, '--request', file('17-req.json', req17), file('17b.json', resp17)],
    [...t, '--request', file('18-req.json', stream.files['request.json']), file('18.sse', stream.files['stream.sse'])],
    [...t, file('b.tokenscope.json', bundleText)],
    { bad: /not a chat completion/ },
    [...t, file('23.json', prose.files['response.json'])],
  ];
  return { lines, singles };
}

describe('tokens --batch', { skip: 'skip' in kimi ? kimi.skip : false }, () => {
  const data = join(tmp, 'data');
  // The worker runs as shipped: bundled the way scripts/build.mjs bundles dist/tokens-batch-worker.js.
  useBuiltBatchWorker(workerFile);

  test('every line of a mixed file has the ids the single-response command gives; bad lines reported, the rest processed', async (t) => {
    const mixed = mixedInput();
    if (!mixed) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    const input = file('mixed.jsonl', mixed.lines.join('\n') + '\n');
    const out = join(tmp, 'mixed.out.jsonl');
    const r = await run('--batch', input, '--out', out, '--tokenizer-dir', dir, '--data-dir', data, '--workers', '2', '--json');
    assert.equal(r.code, 0, r.err);
    const summary = JSON.parse(r.out);
    assert.deepEqual(summary.lines, { read: 8, processed: 5, bad: 2, blank: 1, withPromptIds: 0 });
    assert.deepEqual(
      summary.badLines.map((b: { line: number }) => b.line),
      [2, 7],
    );
    assert.match(r.err, /line 2: not valid JSON/);
    assert.match(r.err, /line 7: not a chat completion/);
    assert.deepEqual(summary.samples.byDataset, { tools: 2, prose: 1 });
    assert.equal(summary.toolCalls.structuredCalls, 3, 'the two tool-call recordings (one twice)');
    assert.equal(summary.toolCalls.contentMarkup, 1, 'the bundle: Kimi markup leaked into content');
    assert.equal(statSync(out).mode & 0o777, 0o600);

    const lines = readOut(out);
    assert.deepEqual(
      lines.map((l) => l.line),
      [1, 3, 4, 6, 8],
    );
    const inputLineOf = [1, 2, 3, 4, 6, 7, 8];
    let markupLines = 0;
    for (const [i, single] of mixed.singles.entries()) {
      if ('bad' in single) {
        assert.match(summary.badLines.find((b: { line: number }) => b.line === inputLineOf[i]).error, single.bad);
        continue;
      }
      const s = await run(...single);
      assert.equal(s.code, 0, s.err);
      const one = JSON.parse(s.out) as {
        tokens: { id: number; kind: string }[];
        ids: number[];
        family: string;
        source: string;
        accounting: { counted: number };
        findings: { rule: string }[];
      };
      const b = lines.find((l) => l.line === inputLineOf[i])!;
      assert.deepEqual(b.completion_ids, one.ids, `line ${b.line}`);
      // The ids are the turn as the model emitted it: as many as the accounting counts.
      assert.equal(b.completion_ids.length, b.accounting.completion.counted, `line ${b.line}`);
      if (one.tokens.some((x) => x.kind === 'marker-as-text')) {
        // Markup returned as text in content (the bundle): shown as text tokens, emitted as the one special id each.
        assert.ok(b.completion_ids.length < one.tokens.length, `line ${b.line}`);
        assert.ok(
          b.completion_ids.includes(163595) && b.completion_ids.includes(163597),
          '<|tool_calls_section_begin|>, <|tool_call_begin|>',
        );
        markupLines++;
      } else
        assert.deepEqual(
          b.completion_ids,
          one.tokens.map((x) => x.id),
          `line ${b.line}`,
        );
      assert.equal(b.family, one.family);
      assert.equal(b.source, one.source);
      assert.equal(b.accounting.completion.counted, one.accounting.counted);
      assert.deepEqual(
        b.findings.map((f) => f.rule),
        one.findings.map((f) => f.rule),
        `line ${b.line} findings`,
      );
    }
    assert.equal(markupLines, 1, 'the bundle line');
    assert.ok(lines.every((l) => l.completion_ids.length > 0));
    assert.equal(lines[0].id, 'gen-1773323476-OOwZSeZbqm2efCV5vDJT');
  });

  test('one worker and three write identical output', async (t) => {
    const mixed = mixedInput();
    if (!mixed) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    // 120 lines: several chunks, so three workers really share the file and reply out of order.
    const input = file('many.jsonl', Array.from({ length: 15 }, () => mixed.lines.join('\n')).join('\n') + '\n');
    const outs = [];
    for (const workers of ['1', '3']) {
      const out = join(tmp, `many-${workers}.jsonl`);
      const r = await run(
        '--batch',
        input,
        '--out',
        out,
        '--tokenizer-dir',
        dir,
        '--data-dir',
        data,
        '--workers',
        workers,
        '--format',
        'specforge',
        '--json',
      );
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(r.out).lines.processed, 75);
      outs.push(readFileSync(out, 'utf8'));
    }
    assert.equal(outs[0].split('\n').length, 76);
    assert.equal(outs[1], outs[0]);
  });

  test('line ends and numbers survive raw chunking: CRLF, a line longer than a read, blank lines, no final newline', async (t) => {
    const mixed = mixedInput();
    if (!mixed) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    const good = mixed.lines[0];
    // Line 3 is 1.2 MB (longer than one 1 MB read, so it spans two, and than a chunk's byte cap); line 5 is only
    // spaces; the last has no newline.
    const long = `{"x":"${'a'.repeat(1_200_000)}"`;
    const input = file('raw.jsonl', [good, good, long, good, '   ', good].join('\r\n') + '\r\n' + good);
    const outs = [];
    for (const workers of ['1', '2']) {
      const out = join(tmp, `raw-${workers}.jsonl`);
      const r = await run('--batch', input, '--out', out, '--tokenizer-dir', dir, '--data-dir', data, '--workers', workers, '--json');
      assert.equal(r.code, 0, r.err);
      const summary = JSON.parse(r.out);
      assert.deepEqual(summary.lines, { read: 7, processed: 5, bad: 1, blank: 1, withPromptIds: 0 });
      assert.deepEqual(
        summary.badLines.map((b: { line: number }) => b.line),
        [3],
      );
      assert.deepEqual(
        readOut(out).map((l) => l.line),
        [1, 2, 4, 6, 7],
      );
      outs.push(readFileSync(out, 'utf8'));
    }
    assert.equal(outs[1], outs[0]);
    const [a, b] = readOut(join(tmp, 'raw-1.jsonl'));
    assert.deepEqual(b.completion_ids, a.completion_ids, 'a CRLF line reads as the same line');
  });

  /** `tokens --batch` over `lines` good lines in a process of its own, as a user runs it (SIGINT goes to it alone). */
  function spawnBatch(name: string, lines: number, workers: string) {
    const mixed = mixedInput()!;
    const good = mixed.lines.filter((l, i) => i === 0 || i === 2 || i === 7);
    const input = file(`${name}.jsonl`, Array.from({ length: lines }, (_, i) => good[i % good.length]).join('\n') + '\n');
    const out = join(tmp, `${name}.out.jsonl`);
    const script = "require('./src/cli/main').main(process.argv.slice(1)).then((c) => { process.exitCode = c; })";
    const child = spawn(
      process.execPath,
      [
        ...TS_LOADER,
        '-e',
        script,
        'tokens',
        '--batch',
        input,
        '--out',
        out,
        '--tokenizer-dir',
        dir,
        '--data-dir',
        data,
        '--workers',
        workers,
        '--json',
      ],
      { cwd: repoRoot, env: { ...process.env, TOKENSCOPE_BATCH_WORKER: workerFile }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const run = { out, stdout: '', stderr: '', exited: new Promise<number | null>((ok) => child.on('exit', (code) => ok(code))) };
    child.stdout.on('data', (d) => (run.stdout += d));
    child.stderr.on('data', (d) => (run.stderr += d));
    /**
     * Resolves once `ready` holds, checked every 50 ms. The limit is generous: on a loaded machine the child's start and
     * tokenizer load take many seconds, and a Ctrl-C sent before the CLI set up its handler would end it by the signal.
     */
    const until = async (ready: () => boolean) => {
      for (const end = Date.now() + 120_000; !ready() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    };
    const outSize = () => {
      try {
        return statSync(out).size;
      } catch {
        return 0; // not created yet
      }
    };
    return {
      ...run,
      child,
      until,
      outSize,
      get stdout() {
        return run.stdout;
      },
      get stderr() {
        return run.stderr;
      },
    };
  }

  /** The output is whole lines, the input's first lines in order, as many as the summary says were processed. */
  function assertWholePrefix(out: string, summary: { lines: { processed: number } }, total: number) {
    const text = readFileSync(out, 'utf8');
    assert.ok(text.endsWith('\n'), 'the file ends with a complete line');
    const lines = readOut(out);
    assert.ok(lines.length > 0 && lines.length < total, `${lines.length} lines written`);
    assert.deepEqual(
      lines.map((l) => l.line),
      Array.from({ length: lines.length }, (_, i) => i + 1),
      'a prefix of the input, in order',
    );
    assert.equal(summary.lines.processed, lines.length);
  }

  test('Ctrl-C stops cleanly: exit 130, the output is complete lines in input order', async (t) => {
    if (!mixedInput()) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    const run = spawnBatch('long', 6000, '2');
    await run.until(() => run.outSize() > 0); // interrupt once output is flowing
    run.child.kill('SIGINT');
    const code = await run.exited;
    assert.equal(code, 130, run.stdout);
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.interrupted, true);
    assert.match(run.stderr, /stopping: finishing the lines already being processed/, 'Ctrl-C is acknowledged at once');
    assertWholePrefix(run.out, summary, 6000);
  });

  test('Ctrl-C twice stops at once, dropping the lines in flight: exit 130, the output still ends on a whole line', async (t) => {
    if (!mixedInput()) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    const run = spawnBatch('twice', 6000, '1');
    // Past the first small chunks, so that a few hundred lines are in flight when the second Ctrl-C comes.
    await run.until(() => run.outSize() > 400_000);
    run.child.kill('SIGINT');
    await run.until(() => /stopping:/.test(run.stderr)); // the first is handled: a second is not merged into it
    run.child.kill('SIGINT');
    const code = await run.exited;
    assert.equal(code, 130, run.stderr);
    assert.match(run.stderr, /stopping now: the lines being processed are dropped/);
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.interrupted, true);
    assertWholePrefix(run.out, summary, 6000);
  });

  test('progress: lines, rate, percent read and ETA on a terminal, erased before the summary; none when stderr is piped', async (t) => {
    const mixed = mixedInput();
    if (!mixed) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
    const input = file('progress.jsonl', Array.from({ length: 8 }, () => mixed.lines.join('\n')).join('\n') + '\n');
    for (const tty of [true, false]) {
      const events: string[] = [];
      const io = {
        out: (x: string) => events.push(`O:${x.split('\n')[0]}`),
        err: (x: string) => events.push(`E:${x}`),
        ...(tty && { progress: (l: string | undefined) => events.push(l === undefined ? 'P:-' : `P:${l}`) }),
      };
      const code = await main(
        [
          'tokens',
          '--batch',
          input,
          '--out',
          join(tmp, 'progress.out.jsonl'),
          '--tokenizer-dir',
          dir,
          '--data-dir',
          data,
          '--workers',
          '1',
        ],
        io,
      );
      assert.equal(code, 0, events.join('\n'));
      const drawn = events.filter((e) => e.startsWith('P:'));
      if (!tty) {
        assert.deepEqual(drawn, [], 'nothing when piped');
        continue;
      }
      assert.ok(drawn.length >= 2, events.join('\n'));
      assert.ok(
        drawn
          .slice(0, -1)
          .every((e) => /^P:(\d+ lines, \d+\/s, \d+% read(, ETA \d+(m\d\d)?s)?|starting: the workers are loading the tokenizer…)$/.test(e)),
        drawn.join('\n'),
      );
      assert.equal(drawn.at(-1), 'P:-', 'erased');
      assert.ok(events.indexOf('P:-') < events.findIndex((e) => e.startsWith('O:')), 'before the summary');
    }
  });

  test('no --out, a missing input, --format other than specforge: exit 2 with one line', async () => {
    assert.match((await run('--batch', 'x.jsonl')).err, /--batch needs --out/);
    const missing = await run('--batch', join(tmp, 'nope.jsonl'), '--out', join(tmp, 'o.jsonl'), '--tokenizer-dir', dir);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /cannot read .*nope\.jsonl: no such file/);
    assert.match((await run('--batch', 'a', '--out', 'b', '--format', 'csv')).err, /--format must be specforge/);
    // A folder with no tokenizer is said once, before any line is read (not once per line).
    const noTokenizer = await run('--batch', file('one.jsonl', '{}\n'), '--out', join(tmp, 'o.jsonl'), '--tokenizer-dir', tmp);
    assert.equal(noTokenizer.code, 2);
    assert.equal(noTokenizer.err, `tokenscope tokens: ${tmp} holds neither tiktoken.model nor tokenizer.json`);
    const absent = await run('--batch', file('one.jsonl', '{}\n'), '--out', join(tmp, 'o.jsonl'), '--tokenizer-dir', join(tmp, 'absent'));
    assert.equal(absent.code, 2);
    assert.match(absent.err, /^tokenscope tokens: tokenizer folder .*absent does not exist$/);
    assert.match((await run('--out', 'b', 'f.json')).err, /--out goes with --batch/);
  });
});

// One owner of analysis: the store's analysis service analyses each exchange once; the tree's opened exchange, the
// Problems panel (its diagnostics come from the view's findings), the token view, the exports, watch and re-run read
// that stored result. Every analysis of a captured exchange goes through `analyzeCaptured`, so the probe counts them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { main } from '../../../src/cli/main';
import { analysisProbe, resultFor, resultWhenAnalysed } from '../../../src/core/capture/analysis';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { prepareRepro, readCapture } from '../../../src/core/export/repro';
import { ACCOUNTING_RULE } from '../../../src/core/tokens/accounting';
import { exchangeTokenStream } from '../../../src/core/tokens/exchange';
import { loadFromDir } from '../../../src/core/tokens/index';
import { OpenRouterClient } from '../../../src/core/upstream/openrouter';
import { rerun } from '../../../src/core/upstream/rerun';
import { parseTarget } from '../../../src/core/upstream/run';
import { caseFromCapture } from '../../../src/core/watch/check';
import { exchangeView } from '../../../src/extension/exchangeView';
import { ruleInfo } from '../../../src/core/checks/index';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { recordExchange } from '../../helpers/exchanges';
import { kimiTokenizerFolder } from '../../helpers/shared';
import { sourceMatches, SRC } from '../../helpers/source';
import { tempDir } from '../proxy/local-upstream';

const counts = new Map<string, number>();
beforeEach(() => {
  counts.clear();
  analysisProbe.onAnalyze = (x) => counts.set(x.id, (counts.get(x.id) ?? 0) + 1);
});
afterEach(() => {
  analysisProbe.onAnalyze = undefined;
});

const REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  messages: [{ role: 'user', content: 'Read the README' }],
  tools: [
    {
      type: 'function',
      function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    },
  ],
  provider: { order: ['chutes'] },
};
// Leaked Kimi K2 markup in content, the section never closed: error findings.
const BODY = JSON.stringify({
  id: 'gen-1',
  object: 'chat.completion',
  model: 'moonshotai/kimi-k2-0905',
  provider: 'Chutes',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content:
          'Reading it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "README.md"}<|tool_call_end|>',
      },
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 40, completion_tokens: 30, total_tokens: 70 },
});

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function record(store: CaptureStore): Promise<string> {
  return recordExchange(store, { request: REQUEST, response: BODY, agent: 'opencode' });
}

test('one analysis per exchange: store → tree → Problems panel → token view → export → watch, all the same findings', async (t) => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    const id = await record(store);
    // The tree opens the exchange right after it finished (before the service ran): it waits for the stored result.
    const x = store.get(id)!;
    const body = store.readResponse(id)!;
    const opened = await resultWhenAnalysed(store, x, body.bytes, body.chunks);
    assert.equal(counts.get(id), 1, 'the service analysed it once; the tree read the result');
    const stored = store.readAnalysis(id)!;
    assert.ok(stored, 'the full analysis is stored');
    assert.deepEqual(opened.analysis, stored.analysis);
    assert.ok(
      opened.analysis.findings.some((f) => f.severity === 'error'),
      'the leaked markup is flagged',
    );
    assert.ok(opened.ctx, 'the parse report has its context without a second analysis');

    // The Problems panel's diagnostics are the view's findings.
    const view = exchangeView({ exchange: x, chunks: body.chunks, result: opened, ruleInfo });
    assert.deepEqual(
      view.findings.map((f) => [f.rule, f.start, f.end]),
      stored.analysis.findings.map((f) => [f.rule, f.start, f.end]),
    );

    // The token view gets the analysis (what the extension hands the worker) and keeps its findings object.
    {
      const tokenizer = loadFromDir(kimiTokenizerFolder(), 'kimi-k2');
      const { stream, analysis } = exchangeTokenStream({
        tokenizer,
        response: opened.response,
        request: opened.request,
        analysis: opened.analysis,
      });
      assert.equal(analysis, opened.analysis, 'the same analysis object');
      // Each token finding wraps the very finding object the Problems panel shows (the accounting adds its own line).
      const wrapped = stream.findings.map((f) => f.finding).filter((f) => f.rule !== ACCOUNTING_RULE);
      assert.equal(wrapped.length, opened.analysis.findings.length);
      wrapped.forEach((f, i) => assert.equal(f, opened.analysis.findings[i], `finding ${i} is the same object`));
    }

    // Exports and watch read it; a second process (read-only) reads it too.
    const repro = prepareRepro(readCapture(store, id));
    assert.deepEqual(repro.analysis.analysis.findings, stored.analysis.findings);
    const watched = caseFromCapture(store, id, { target: 'openrouter:chutes' });
    assert.ok(watched.rules.length > 0);
    const reader = await openStore(tmp.dir, { readOnly: true });
    try {
      const again = resultFor(reader, reader.get(id)!, body.bytes, body.chunks);
      assert.deepEqual(again.analysis.findings, stored.analysis.findings);
    } finally {
      await reader.close();
    }
    assert.equal(counts.get(id), 1, 'still one analysis after tree, token view, export, watch and a second reader');
  } finally {
    await store.close();
    tmp.remove();
  }
});

test('a reader of an exchange its writer did not analyse analyses it once, through the service', async () => {
  const tmp = tempDir();
  try {
    const writer = await openStore(tmp.dir, { analyze: false });
    const id = await record(writer);
    await writer.close();
    assert.equal(counts.get(id), undefined);
    const reader = await openStore(tmp.dir, { readOnly: true });
    try {
      const x = reader.get(id)!;
      const body = reader.readResponse(id)!;
      assert.equal(reader.readAnalysis(id), undefined, 'nothing stored');
      const r = await resultWhenAnalysed(reader, x, body.bytes, body.chunks);
      assert.ok(r.analysis.findings.length > 0);
      assert.equal(counts.get(id), 1);
    } finally {
      await reader.close();
    }
  } finally {
    tmp.remove();
  }
});

test('a re-run is a stored capture analysed once by the service; its outcome reads that analysis', async () => {
  const emu = await startOpenRouterEmulator();
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    const id = await record(store);
    await store.idle();
    const o = await rerun(store, id, parseTarget('openrouter:chutes'), {
      openrouter: new OpenRouterClient({ baseUrl: emu.url, apiKey: 'sk-or-v1-test' }),
    });
    assert.equal(o.ok, true, o.error);
    const rid = o.exchangeId!;
    assert.equal(counts.get(rid), 1, 'the re-run capture was analysed once (no stand-in exchange analysed beside it)');
    assert.deepEqual(o.analysis, store.readAnalysis(rid)!.analysis);
    assert.deepEqual(o.summary, store.readAnalysis(rid)!.summary);
    assert.equal(counts.get(id), 1);
  } finally {
    await store.close();
    tmp.remove();
    await emu.close();
  }
});

test("lint ID reads the stored analysis, so its findings are show's and the Problems panel's; --model/--family/--request analyse again and say so", async () => {
  const tmp = tempDir();
  // A body cap below the response's size: the service adds `capture-truncated`, which analysing the bytes alone misses.
  const store = await openStore(tmp.dir, { maxBodyBytes: 300 });
  try {
    const id = await record(store);
    await store.idle();
    const stored = store.readAnalysis(id)!;
    assert.ok(stored.summary.rules.includes('capture-truncated'), stored.summary.rules.join(', '));
    const key = (fs: { rule: string; start?: number; end?: number; message: string }[]) =>
      fs.map((f) => [f.rule, f.start ?? null, f.end ?? null, f.message]);

    const lint = await cli('lint', id, '--json', '--data-dir', tmp.dir);
    const show = await cli('show', id, '--json', '--data-dir', tmp.dir);
    assert.equal(lint.err, '', 'nothing said: the stored analysis is what lint reports');
    const linted = JSON.parse(lint.out);
    assert.deepEqual(key(linted.findings), key(stored.analysis.findings), 'lint = the stored analysis');
    assert.deepEqual(key(linted.findings), key(JSON.parse(show.out).findings), 'lint = show');
    const x = store.get(id)!;
    const body = store.readResponse(id)!;
    const panel = exchangeView({
      exchange: x,
      chunks: body.chunks,
      result: await resultWhenAnalysed(store, x, body.bytes, body.chunks),
      ruleInfo,
    });
    assert.deepEqual(
      linted.findings.map((f: { rule: string }) => f.rule),
      panel.findings.map((f) => f.rule),
      'lint = the Problems panel',
    );
    assert.equal(lint.code, 1, 'an error finding: exit 1');
    const text = await cli('lint', id, '--data-dir', tmp.dir);
    assert.match(text.out, /capture-truncated/);
    assert.equal(counts.get(id), 1, 'lint, show and the view read the one analysis');

    const forced = await cli('lint', id, '--family', 'kimi-k2', '--model', 'moonshotai/kimi-k2-0905', '--json', '--data-dir', tmp.dir);
    assert.match(
      forced.err,
      new RegExp(
        `^capture ${id}: analysed again for --model, --family; \`tokenscope show ${id}\` and the Problems panel show the stored analysis$`,
      ),
    );
    assert.ok(
      !JSON.parse(forced.out).findings.some((f: { rule: string }) => f.rule === 'capture-truncated'),
      'analysed again from the bytes alone',
    );
  } finally {
    await store.close();
    tmp.remove();
  }
});

test('no reader analyses on its own: analyzeExchange is called only by the analysis service', () => {
  const allowed = new Set([join('core', 'analyze.ts'), join('core', 'capture', 'analysis.ts')]);
  assert.deepEqual(
    sourceMatches(/\banalyzeExchange\s*\(/, (f) => allowed.has(f)),
    [],
  );
});

test('lint analyses on its own only what no store analysed (a file) or what its options change: analyzeWithContext has no other caller', () => {
  const allowed = new Set([join('core', 'analyze.ts'), join('cli', 'commands', 'lint.ts')]);
  assert.deepEqual(
    sourceMatches(/\banalyzeWithContext\s*\(/, (f) => allowed.has(f)),
    [],
  );
  const lint = readFileSync(join(SRC, 'cli', 'commands', 'lint.ts'), 'utf8');
  assert.match(lint, /input\.stored \?\? analyzeWithContext\(/, 'lint takes the stored result first');
});

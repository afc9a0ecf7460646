// A stored analysis holds each text once: reasoning, content and tool-call arguments are ranges of the native text,
// and every reader gets back exactly the analysis that ran. Rows the previous release wrote still read; a release that
// knows only those finds no stored analysis in a new row and analyses the exchange itself (the same result).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import { analyze } from '../../../src/core/analyze';
import { analyzeCaptured, ANALYSIS_VERSION, resultFor, type StoredAnalysis } from '../../../src/core/capture/analysis';
import { CaptureDb, DB_FILE } from '../../../src/core/capture/database';
import { openStore } from '../../../src/core/capture/store';
import { packAnalysis, unpackAnalysis } from '../../../src/core/capture/stored-form';
import type { Analysis } from '../../../src/core/model';
import { bigStreamEvents } from '../../helpers/big-stream';
import { recordExchange } from '../../helpers/exchanges';
import { prng } from '../../helpers/prng';
import { response } from '../checks/helpers';
import { tempDir } from '../proxy/local-upstream';

const SUMMARY = { counts: { error: 0, warning: 0, info: 0 }, rules: [] };
const stored = (analysis: Analysis): StoredAnalysis => ({ version: ANALYSIS_VERSION, summary: SUMMARY, analysis });
const _roundTrip = (s: StoredAnalysis) => unpackAnalysis(JSON.parse(packAnalysis(s)));
/** How the previous release read a row (AnalysisService.read before texts were stored once). */
const previousRelease = (row: unknown) =>
  (row as StoredAnalysis | undefined)?.version === ANALYSIS_VERSION ? (row as StoredAnalysis) : undefined;

const LONG = 'The user wants the weather in Florence, Italy. I will read src/a.ts first. '.repeat(20);
/** Long texts no other text holds. */
const THINK = `Thinking: ${LONG}`;
const BEFORE = `Before: ${LONG}`;
const AFTER = `After: ${LONG}`;
/** `chars` of words in a seeded order: prose that compresses about as model output does, not as a repeated line. */
function prose(chars: number, seed: number): string {
  const words = LONG.split(' ').concat(['const', 'return', '{', '}', 'src/a.ts', 'Olá', 'café', '—', '\n', 'weather(', ');']);
  const rand = prng(seed);
  const out: string[] = [];
  for (let n = 0; n < chars; ) {
    const w = words[Math.floor(rand() * words.length)] + (rand() < 0.3 ? String(Math.floor(rand() * 1000)) : '');
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
}
const CALL = `<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>${JSON.stringify({ path: 'src/a.ts', note: 'x'.repeat(120) })}<|tool_call_end|><|tool_calls_section_end|>`;

test('every conformance case, raw and rendered, reads back as the same analysis, each long text stored once', () => {
  const dir = join(__dirname, '../../fixtures/conformance');
  let cases = 0;
  let ranged = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    for (const c of (JSON.parse(readFileSync(join(dir, file), 'utf8')) as { cases: { id: string; model_text: string }[] }).cases) {
      // Raw: the model's text as it is, with long reasoning and content around its calls.
      const raw = analyze({ nativeText: `<think>${THINK}</think>${BEFORE}${c.model_text}${AFTER}` });
      // Rendered: the same calls returned as content over the wire.
      const rendered = analyze({
        response: response({ model: 'moonshotai/kimi-k2-0905', message: { reasoning: THINK, content: `${BEFORE}${c.model_text}${CALL}` } }),
      });
      for (const a of [raw, rendered]) {
        const s = stored(a);
        const row = packAnalysis(s);
        // What the previous release read back: the analysis through JSON.
        assert.deepEqual(unpackAnalysis(JSON.parse(row)), JSON.parse(JSON.stringify(s)), `${file} ${c.id}`);
        cases++;
        // Reasoning and content are always ranges (content around a call may hold a line break the native text has not
        // there); so are arguments the native text holds as they are (XML grammars' arguments are JSON built from it).
        const { message } = (JSON.parse(row) as StoredAnalysis).analysis;
        const long = (t: string | undefined) => t !== undefined && t.length >= 64;
        assert.ok(!long(message.reasoning) && !long(message.content), `${file} ${c.id}: reasoning and content are ranges`);
        const inline = message.toolCalls.map((t) => t.arguments).filter((t) => long(t) && a.native.text.includes(t));
        assert.deepEqual(inline, [], `${file} ${c.id}: no argument text inline that the native text holds`);
        if ([a.message.reasoning, a.message.content, ...a.message.toolCalls.map((t) => t.arguments)].some(long)) ranged++;
      }
    }
  }
  assert.ok(cases > 100 && ranged > cases / 2, `${ranged} of ${cases} rows hold texts as ranges`);
});

test('the stored row of a large streamed exchange holds its text once, and readers get the analysis that ran', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { maxBodyBytes: 1 << 30 });
    // 2 MB: analysed on the capture worker thread, which writes the row's text.
    const dense = await recordExchange(store, {
      request: { model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      response:
        [...Array(40).keys()]
          .map(
            (i) =>
              `data: ${JSON.stringify({ id: 'g', object: 'chat.completion.chunk', model: 'moonshotai/kimi-k2-0905', choices: [{ index: 0, delta: { content: prose(50_000, i) } }] })}\n\n`,
          )
          .join('') + 'data: [DONE]\n\n',
      contentType: 'text/event-stream',
    });
    const id = await recordExchange(store, {
      request: { model: 'moonshotai/kimi-k2-0905', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      response: [...bigStreamEvents(2e6)].join(''),
      contentType: 'text/event-stream',
    });
    await store.idle();
    const x = store.get(id)!;
    const res = store.readResponse(id)!;
    const fresh = analyzeCaptured(
      { ...x, requestBody: '{"model":"moonshotai/kimi-k2-0905","stream":true,"messages":[{"role":"user","content":"hi"}]}' },
      res.bytes,
      res.chunks,
    );
    const read = store.readAnalysis(id)!;
    assert.deepEqual(read, { version: ANALYSIS_VERSION, summary: fresh.summary, analysis: fresh.analysis }, 'the same object as analysed');

    const denseRead = store.readAnalysis(dense)!;
    const denseBody = store.readResponse(dense)!;
    const denseFresh = analyzeCaptured(
      {
        ...store.get(dense)!,
        requestBody: '{"model":"moonshotai/kimi-k2-0905","stream":true,"messages":[{"role":"user","content":"hi"}]}',
      },
      denseBody.bytes,
      denseBody.chunks,
    );
    assert.deepEqual(
      denseRead,
      JSON.parse(JSON.stringify({ version: ANALYSIS_VERSION, summary: denseFresh.summary, analysis: denseFresh.analysis })),
    );
    await store.close();

    const db = CaptureDb.open(join(tmp.dir, DB_FILE), { readOnly: true });
    const length = (of: string) => db.rows<{ n: number }>('SELECT length(result) AS n FROM analyses WHERE exchange_id = ?', of)[0].n;
    const row = length(id);
    const denseRow = length(dense);
    db.close();
    // 2 MB of content, stored once and deflated: well under half its size.
    assert.ok(
      denseRow < denseFresh.analysis.native.text.length / 2,
      `dense row ${denseRow} chars for ${denseFresh.analysis.native.text.length} of native text`,
    );
    const native = fresh.analysis.native.text.length;
    const texts = (fresh.analysis.message.content?.length ?? 0) + (fresh.analysis.message.reasoning?.length ?? 0);
    assert.ok(texts > native * 0.9, 'the content and reasoning are most of the native text');
    // Each text twice would be about native + texts; once is the native text and a few kB of segments and findings.
    assert.ok(row < native + 16_384, `row ${row} chars for ${native} chars of native text (${texts} more if stored twice)`);
  } finally {
    tmp.remove();
  }
});

test('a row of a megabyte or more is deflated and reads back the same; the previous release reads none of it', () => {
  const content = prose(1_500_000, 7);
  const s = stored(
    analyze({
      response: response({ model: 'moonshotai/kimi-k2-0905', message: { reasoning: prose(300_000, 8), content: `${content}${CALL}` } }),
    }),
  );
  const row = packAnalysis(s);
  const parsed = JSON.parse(row) as { version: number; deflated?: string };
  assert.equal(typeof parsed.deflated, 'string');
  assert.equal(parsed.version, 2000 + ANALYSIS_VERSION);
  assert.ok(row.length < content.length / 2, `${row.length} chars for ${content.length} of content`);
  assert.deepEqual(unpackAnalysis(parsed), JSON.parse(JSON.stringify(s)));
  assert.equal(previousRelease(parsed), undefined);
  // Damaged: not base64 of a deflated row, an inner row of another analysis version, no text at all.
  const wrongInner = (inner: object) => deflateRawSync(JSON.stringify(inner)).toString('base64');
  for (const deflated of [
    'not deflated',
    wrongInner({ ...s, version: ANALYSIS_VERSION + 1 }),
    wrongInner({ version: 2000 + ANALYSIS_VERSION, deflated: '' }),
    undefined,
  ]) {
    assert.equal(unpackAnalysis({ version: 2000 + ANALYSIS_VERSION, deflated }), undefined);
  }
});

test('rows the previous release wrote read as they are; the previous release analyses a new row itself, to the same result', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir);
    const body = JSON.stringify({
      id: 'g',
      object: 'chat.completion',
      model: 'moonshotai/kimi-k2-0905',
      choices: [{ index: 0, message: { role: 'assistant', content: `${LONG}${CALL}` }, finish_reason: 'stop' }],
    });
    const id = await recordExchange(store, {
      request: { model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: 'hi' }] },
      response: body,
    });
    const id2 = await recordExchange(store, {
      request: { model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: 'hi' }] },
      response: body,
    });
    await store.idle();
    const now = store.readAnalysis(id)!;
    await store.close();

    const db = CaptureDb.open(join(tmp.dir, DB_FILE));
    const newRow = db.analysis(id);
    assert.ok((newRow as { texts?: unknown }).texts, 'the new row holds ranges');
    // The previous release's reader: no stored analysis, so it analyses the body, and gets what this one reads.
    assert.equal(previousRelease(newRow), undefined);
    const x = { ...db.get(id)!.x, requestBody: '{"model":"moonshotai/kimi-k2-0905","messages":[{"role":"user","content":"hi"}]}' };
    const again = resultFor({ readAnalysis: (i) => previousRelease(db.analysis(i)) }, x, Buffer.from(body)).analysis;
    assert.deepEqual(JSON.parse(JSON.stringify(again)), now.analysis);
    // A row as the previous release writes it (the whole analysis), and damaged rows (analysed again, never wrong).
    db.putAnalysis(db.get(id2)!.x, now.analysis.findings, JSON.stringify(now));
    db.close();
    const reader = await openStore(tmp.dir, { readOnly: true });
    assert.deepEqual(reader.readAnalysis(id2), now);
    await reader.close();
    const packed = JSON.parse(packAnalysis(now));
    for (const texts of [[['content', 0, 1e9]], [[7, 0, 10]], [['summary', 0, 10]], 'x'])
      assert.equal(unpackAnalysis({ ...packed, texts }), undefined, JSON.stringify(texts));
  } finally {
    tmp.remove();
  }
});

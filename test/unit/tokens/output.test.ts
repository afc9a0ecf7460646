// `tokens --json` written a piece at a time (cli/tokens-output.ts) is byte for byte `JSON.stringify(…, null, 2)` of the
// stream as token objects, and the columns hold what the objects hold: on turns with special ids, markers spelled
// as text, partial UTF-8 tokens, call indexes, a missing marker, server ids, and an empty turn.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { writeJson, type PromptJson } from '../../../src/cli/tokens-output';
import type { ParsedResponse } from '../../../src/core/model';
import { exchangeTokenStream, exchangeTokenTable } from '../../../src/core/tokens/exchange';
import { loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { emittedIds, emittedTableIds, type TokenStream } from '../../../src/core/tokens/stream';
import { streamOf, tableOf } from '../../../src/core/tokens/table';
import { kimiTokenizerDir } from './helpers';

const found = kimiTokenizerDir();

function response(fields: Partial<ParsedResponse>): ParsedResponse {
  return { protocol: 'openai-chat', streamed: false, message: { toolCalls: [] }, terminated: true, events: [], wireIssues: [], ...fields };
}

/** The `--json` document as one `JSON.stringify` of the token objects: the shape scripts consume. */
function oracle(s: TokenStream, family: string | undefined, ids: number[], prompt: PromptJson | null): string {
  const tokens = s.tokens.map((t) => ({
    id: t.id,
    text: t.text,
    kind: t.kind,
    segment: t.segment ?? null,
    ...(t.callIndex === undefined ? {} : { callIndex: t.callIndex }),
    start: t.start,
    end: t.end,
    ...(t.bytes ? { bytes: t.bytes } : {}),
  }));
  const a = s.accounting;
  const accounting = {
    counted: a.counted,
    countedReasoning: a.countedReasoning,
    billed: a.billed ?? null,
    billedReasoning: a.billedReasoning ?? null,
    delta: a.delta ?? null,
    mismatch: a.mismatch,
  };
  const findings = s.findings.map((f) => ({
    rule: f.finding.rule,
    severity: f.finding.severity,
    message: f.finding.message,
    tokens: f.tokens ?? null,
    ...(f.expectedBefore === undefined ? {} : { expectedBefore: f.expectedBefore, expectedMarker: f.finding.expectedMarker ?? null }),
  }));
  return JSON.stringify(
    { source: s.source, tokenizer: s.tokenizer, family: family ?? null, tokens, accounting, findings, ids, prompt },
    null,
    2,
  );
}

const LEAK =
  'I will read 😀 the file.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "a"}<|tool_call_end|>';

describe('tokens --json written in pieces (Kimi K2)', { skip: 'skip' in found ? found.skip : false }, () => {
  const kimi = loadKimiTokenizer({ dir: 'dir' in found ? found.dir : '' });
  const model = 'moonshotai/kimi-k2-0905';
  const turns: [string, ParsedResponse][] = [
    [
      'raw text with a missing section end',
      response({ protocol: 'native-text', message: { content: `<think>Check 😀 it.</think>${LEAK}`, toolCalls: [] } }),
    ],
    [
      'markup leaked into content',
      response({ model, message: { content: LEAK, toolCalls: [] }, finishReason: 'stop', usage: { completionTokens: 33 } }),
    ],
    [
      'a structured turn with two calls',
      response({
        model,
        message: {
          reasoning: 'Two files.',
          content: 'Reading.',
          toolCalls: [0, 1].map((i) => ({ index: i, id: `functions.read:${i}`, name: 'read', arguments: `{"path":"${i}.ts"}` })),
        },
        finishReason: 'tool_calls',
        usage: { completionTokens: 40, reasoningTokens: 3 },
      }),
    ],
    ['server ids with a split character', response({ model, outputIds: [...kimi.encodeOrdinary('a 😀 b'), 163586], finishReason: 'stop' })],
    ['an empty turn', response({ model, message: { toolCalls: [] }, finishReason: 'stop' })],
  ];

  /** What each case is there for, checked so the comparison covers it. */
  const CASES: Record<string, (s: TokenStream) => void> = {
    'raw text with a missing section end': (s) => assert.ok(s.findings.some((f) => f.expectedBefore !== undefined)),
    'markup leaked into content': (s) => assert.ok(s.tokens.some((t) => t.kind === 'marker-as-text')),
    'a structured turn with two calls': (s) => assert.ok(s.tokens.some((t) => t.callIndex === 1)),
    'server ids with a split character': (s) => assert.ok(s.source === 'server' && s.tokens.some((t) => t.bytes?.length)),
    'an empty turn': (s) => assert.ok(s.tokens.length <= 1),
  };

  for (const [name, res] of turns) {
    test(name, () => {
      const { table, analysis } = exchangeTokenTable({ tokenizer: kimi, response: res, model });
      const { stream } = exchangeTokenStream({ tokenizer: kimi, response: res, model });
      assert.deepEqual(streamOf(table), stream, 'the columns hold what the objects hold');
      assert.deepEqual(streamOf(tableOf(stream)), stream, 'and back');
      CASES[name]?.(stream);
      const ids = emittedIds(kimi, stream);
      assert.deepEqual(Array.from(emittedTableIds(kimi, table)), ids);
      for (const prompt of [null, { ids: [1, 2, 3], counted: 3, billed: 5, delta: 2, mismatch: false }]) {
        const pieces: string[] = [];
        writeJson(table, analysis.family, emittedTableIds(kimi, table), prompt, (p) => pieces.push(p));
        assert.equal(pieces.join('\n'), oracle(stream, analysis.family, ids, prompt));
      }
    });
  }

  test('a large turn goes out in many pieces of whole lines', () => {
    const res = response({ model, message: { content: 'word '.repeat(200_000), toolCalls: [] }, finishReason: 'stop' });
    const { table, analysis } = exchangeTokenTable({ tokenizer: kimi, response: res, model });
    const pieces: string[] = [];
    writeJson(table, analysis.family, emittedTableIds(kimi, table), null, (p) => pieces.push(p));
    assert.ok(pieces.length > 10, `${pieces.length} pieces`);
    assert.ok(pieces.every((p) => !p.endsWith('\n') && p.length < 2 << 20));
    const { stream } = exchangeTokenStream({ tokenizer: kimi, response: res, model });
    assert.equal(pieces.join('\n'), oracle(stream, analysis.family, emittedIds(kimi, stream), null));
  });
});

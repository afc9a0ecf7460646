import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ParsedResponse } from '../../../src/core/model';
import { exchangeTokenTable } from '../../../src/core/tokens/exchange';
import { loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { buildTokenTable } from '../../../src/core/tokens/stream';
import { ColumnsBuilder, streamOf, type TokenTable } from '../../../src/core/tokens/table';
import { kimiTokenizerDir } from './helpers';

const found = kimiTokenizerDir();

function response(fields: Partial<ParsedResponse>): ParsedResponse {
  return { protocol: 'openai-chat', streamed: false, message: { toolCalls: [] }, terminated: true, events: [], wireIssues: [], ...fields };
}

/** The table's tokens as plain data (columns read up to `length`), to compare tables built apart. */
const tokensOf = (t: TokenTable) => streamOf(t).tokens;

// `tokens --batch` builds every line's table into one set of columns: each must be the table a fresh build gives.
describe('token tables built into reused columns (Kimi K2)', { skip: 'skip' in found ? found.skip : false }, () => {
  const kimi = loadKimiTokenizer({ dir: 'dir' in found ? found.dir : '' });
  const model = 'moonshotai/kimi-k2-0905';
  const withCall = response({
    model,
    message: {
      reasoning: 'Need the file.',
      content: 'Reading it.',
      toolCalls: [{ index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path":"a.ts"}' }],
    },
    finishReason: 'tool_calls',
    usage: { completionTokens: 24 },
  });
  const prose = response({
    model,
    message: { content: 'Plain words, no segments of note: ünïcødé ✓.', toolCalls: [] },
    finishReason: 'stop',
  });

  test('a turn built after another into the same columns equals its fresh build: no segment, call or label carried over', () => {
    const columns = new ColumnsBuilder();
    const first = exchangeTokenTable({ tokenizer: kimi, response: withCall, columns }).table;
    assert.ok(
      first.columns.segments.subarray(0, first.columns.length).some((s) => s !== 0),
      'the first turn has segments',
    );
    assert.ok(
      first.columns.calls.subarray(0, first.columns.length).some((c) => c >= 0),
      'and a call',
    );
    const firstLength = first.columns.length;
    // Raw native text has no segments: a reused column that kept the first turn's would give its tokens some (the
    // text is shorter than the first turn, so the columns are not grown anew).
    const native = { text: 'Need the file. Reading it.', segments: [] };
    const again = buildTokenTable({ tokenizer: kimi, native, columns });
    const fresh = buildTokenTable({ tokenizer: kimi, native });
    assert.equal(again.columns, columns.columns, 'built into the given columns');
    assert.ok(again.columns.length < firstLength);
    assert.deepEqual(tokensOf(again), tokensOf(fresh));
    assert.ok(tokensOf(again).every((t) => t.segment === undefined && t.callIndex === undefined));
    assert.deepEqual(again.columns.labels.length, fresh.columns.labels.length, 'labels are the turn’s own');
    for (const r of [prose, withCall]) {
      const a = exchangeTokenTable({ tokenizer: kimi, response: r, columns }).table;
      const b = exchangeTokenTable({ tokenizer: kimi, response: r }).table;
      assert.deepEqual(tokensOf(a), tokensOf(b));
      assert.deepEqual({ ...a, columns: undefined }, { ...b, columns: undefined });
    }
  });

  test('columns grown by one long turn are let go on the next build', () => {
    const columns = new ColumnsBuilder();
    const long = buildTokenTable({ tokenizer: kimi, native: { text: 'word '.repeat(70_000), segments: [] }, columns });
    assert.ok(long.columns.length > 1 << 16 && columns.columns.ids.length > 1 << 16);
    const short = buildTokenTable({ tokenizer: kimi, native: { text: 'a short one', segments: [] }, columns });
    assert.ok(columns.columns.ids.length < 1 << 16, `kept room for ${columns.columns.ids.length} tokens`);
    assert.deepEqual(tokensOf(short), tokensOf(buildTokenTable({ tokenizer: kimi, native: { text: 'a short one', segments: [] } })));
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { literalAlternation } from '../../../src/core/tokens/specials';

test('literal alternation: leftmost, then longest; regex characters are literal', () => {
  const re = literalAlternation(['<|a|>', '<|ab|>', '<', '[EOS]', '<｜tool▁sep｜>', '.*'])!;
  const found = [...'x<|ab|>y<|a|><z[EOS].*<｜tool▁sep｜>[EOS'.matchAll(re)].map((m) => [m.index, m[0]]);
  assert.deepEqual(found, [
    [1, '<|ab|>'],
    [8, '<|a|>'],
    [13, '<'],
    [15, '[EOS]'],
    [20, '.*'],
    [22, '<｜tool▁sep｜>'],
  ]);
  assert.equal(literalAlternation([]), undefined);
  assert.equal(literalAlternation(['']), undefined);
});

/** Costs as people read them: three significant digits in plain decimals, never float noise or an exponent. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatCost, usageText } from '../../src/core/cost';

test('a cost has three significant digits, plain decimals, and cents from a dollar up', () => {
  assert.equal(formatCost(0.00010229999999999999), '$0.000102');
  assert.equal(formatCost(0.0015), '$0.0015');
  assert.equal(formatCost(0.5), '$0.50');
  assert.equal(formatCost(0.123456), '$0.123');
  assert.equal(formatCost(0.0009996), '$0.001', 'rounding up to the next digit drops the zeros it leaves');
  assert.equal(formatCost(0.99999), '$1.00');
  assert.equal(formatCost(12.5), '$12.50');
  assert.equal(formatCost(1e-7), '$0.0000001');
  assert.equal(formatCost(3e-12), '<$0.000000001');
  assert.equal(formatCost(0), '$0');
  assert.equal(formatCost(-0.002), '-$0.002');
  assert.equal(formatCost(undefined), '—');
  assert.equal(formatCost(Number.NaN, '-'), '-');
});

test('usage reads as tokens and a formatted cost', () => {
  assert.equal(
    usageText({ promptTokens: 1200, cachedTokens: 800, completionTokens: 27, reasoningTokens: 12, cost: 0.00010229999999999999 }),
    '1200 prompt (800 cached) · 27 completion (12 reasoning) · $0.000102',
  );
  assert.equal(usageText({ totalTokens: 9 }), '9 tokens');
  assert.equal(usageText({}), undefined);
  assert.equal(usageText(undefined), undefined);
});

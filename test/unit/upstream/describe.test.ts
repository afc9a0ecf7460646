import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareText, verifyText } from '../../../src/core/upstream/describe';
import { k2vvSummary, schemaAccuracy } from '../../../src/core/upstream/metrics';

test('one request, one provider, one sample are said in the singular', () => {
  const results = [{ ok: true, finishReason: 'tool_calls' as const, toolCallsValid: true }];
  const verify = verifyText({
    provider: 'fireworks',
    total: 1,
    cancelled: false,
    summary: k2vvSummary(results),
    schema: schemaAccuracy(results),
    findingsByRule: {},
    items: [],
  });
  assert.match(verify, /^fireworks: 1 request\n/);
  assert.match(verify, /\n {2}findings {8}none$/);
  const flagged = verifyText({
    provider: 'chutes',
    total: 2,
    cancelled: false,
    summary: k2vvSummary(results),
    schema: schemaAccuracy(results),
    findingsByRule: { 'section-unclosed': 2 },
    items: [],
  });
  assert.match(flagged, /\n {2}findings\n {4}section-unclosed +2 of 2 responses$/, 'no trailing blanks after the heading');

  const compare = compareText({
    model: 'moonshotai/kimi-k2-0905',
    reference: 'fireworks',
    samples: 1,
    concurrency: 4,
    cancelled: false,
    wallMs: 1200,
    providers: [],
  });
  assert.match(compare, /^moonshotai\/kimi-k2-0905: 0 providers × 1 sample, concurrency 4, 1\.2 s\n/);
});

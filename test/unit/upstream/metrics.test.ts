import assert from 'node:assert/strict';
import { test } from 'node:test';
import { k2vvSummary, schemaAccuracy, toolCallsValid, toolCallValid, triggerSimilarity } from '../../../src/core/upstream/metrics';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read',
      parameters: { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer', minimum: 1 } }, required: ['path'] },
    },
  },
  { type: 'function', function: { name: 'noop', parameters: {} } },
];

test('trigger similarity: hand-computed confusion matrix, precision, recall and F1', () => {
  // reference / candidate per request:
  //  1 tool_calls / tool_calls → TP      5 stop / stop → TN
  //  2 tool_calls / tool_calls → TP      6 stop / tool_calls → FP
  //  3 tool_calls / tool_calls → TP      7 tool_calls / stop → FN
  //  4 stop / stop → TN                  8 tool_calls / (failed) → FN
  const m = triggerSimilarity([
    { reference: 'tool_calls', candidate: 'tool_calls' },
    { reference: 'tool_calls', candidate: 'tool_calls' },
    { reference: 'tool_calls', candidate: 'tool_calls' },
    { reference: 'stop', candidate: 'stop' },
    { reference: 'stop', candidate: 'stop' },
    { reference: 'stop', candidate: 'tool_calls' },
    { reference: 'tool_calls', candidate: 'stop' },
    { reference: 'tool_calls', candidate: undefined },
  ]);
  assert.deepEqual({ tp: m.tp, fp: m.fp, fn: m.fn, tn: m.tn }, { tp: 3, fp: 1, fn: 2, tn: 2 });
  assert.equal(m.precision, 3 / 4); // 0.75
  assert.equal(m.recall, 3 / 5); // 0.6
  // Harmonic mean 2·0.75·0.6/(0.75+0.6) = 0.9/1.35 = 2/3
  assert.ok(Math.abs(m.f1! - 2 / 3) < 1e-12);
});

test('trigger similarity edge cases: no positives anywhere, and no agreement at all', () => {
  const none = triggerSimilarity([{ reference: 'stop', candidate: 'stop' }]);
  assert.deepEqual([none.precision, none.recall, none.f1], [null, null, null]);
  const disjoint = triggerSimilarity([
    { reference: 'tool_calls', candidate: 'stop' },
    { reference: 'stop', candidate: 'tool_calls' },
  ]);
  assert.deepEqual([disjoint.precision, disjoint.recall, disjoint.f1], [0, 0, 0]);
});

test('schema validity follows K2VV: name lookup, empty schema fails, JSON parse, JSON Schema', () => {
  assert.equal(toolCallValid({ name: 'read', arguments: '{"path": "README.md"}' }, TOOLS), true);
  assert.equal(toolCallValid({ name: 'read', arguments: { path: 'a', limit: 3 } }, TOOLS), true, 'already-parsed arguments');
  assert.equal(toolCallValid({ name: 'read', arguments: '{"path": 42}' }, TOOLS), false, 'wrong type');
  assert.equal(toolCallValid({ name: 'read', arguments: '{"limit": 0}' }, TOOLS), false, 'missing required, below minimum');
  assert.equal(toolCallValid({ name: 'read', arguments: '{"path": "READ' }, TOOLS), false, 'truncated JSON');
  assert.equal(toolCallValid({ name: 'write', arguments: '{}' }, TOOLS), false, 'unknown tool');
  assert.equal(toolCallValid({ name: 'noop', arguments: '{}' }, TOOLS), false, 'K2VV: `if not schema` fails an empty schema');
  assert.equal(toolCallsValid([], TOOLS), undefined);
  assert.equal(
    toolCallsValid(
      [
        { name: 'read', arguments: '{"path":"a"}' },
        { name: 'read', arguments: '{' },
      ],
      TOOLS,
    ),
    false,
  );
});

test('schema accuracy and the K2VV summary: hand-computed', () => {
  const results = [
    { ok: true, finishReason: 'tool_calls', toolCallsValid: true },
    { ok: true, finishReason: 'tool_calls', toolCallsValid: true },
    { ok: true, finishReason: 'tool_calls', toolCallsValid: false },
    { ok: true, finishReason: 'tool_calls', toolCallsValid: undefined }, // tool_calls finish, no calls
    { ok: true, finishReason: 'stop' },
    { ok: true, finishReason: 'length' },
    { ok: false, finishReason: undefined },
  ];
  // 4 tool_calls finishes, 2 valid → 50 %.
  assert.deepEqual(schemaAccuracy(results), { finishToolCalls: 4, successful: 2, failed: 2, accuracy: 0.5 });
  assert.deepEqual(k2vvSummary(results), {
    successCount: 6,
    failureCount: 1,
    finishStop: 1,
    finishToolCalls: 4,
    finishOthers: 1,
    finishOthersDetail: { length: 1 },
    successfulToolCallCount: 2,
    schemaValidationErrorCount: 2,
  });
  assert.equal(schemaAccuracy([{ finishReason: 'stop' }]).accuracy, null);
});

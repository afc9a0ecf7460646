// The tools' schemas are compiled once per distinct schema and kept in a bounded table (args-schema and repair share it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_VALIDATORS, validatorFor, validatorStats } from '../../../src/core/checks/schema-validators';
import check from '../../../src/core/checks/args-schema';
import { call, response, run } from './helpers';
import { normalizeRequest } from '../../../src/core/wire/index';

const schema = (n: number) => ({
  type: 'object',
  properties: { path: { type: 'string' }, [`k${n}`]: { type: 'integer' } },
  required: ['path'],
});

test('one compile per distinct schema: the same object, and an equal schema in a later request, reuse it', () => {
  const before = validatorStats().compiles;
  const s = schema(-1);
  const v = validatorFor(s);
  assert.equal(validatorFor(s), v);
  assert.equal(validatorFor(JSON.parse(JSON.stringify(s)) as object), v, 'an equal schema from another request');
  assert.equal(validatorStats().compiles - before, 1);
  // Through the rule: 200 calls of one request, and 20 requests with the same tool list, compile nothing more.
  const tools = [{ type: 'function', function: { name: 'read', parameters: schema(-2) } }];
  const calls = Array.from({ length: 200 }, (_, i) => call('read', i % 2 ? '{"path":"a"}' : '{"path":1}', `c${i}`, i));
  const mid = validatorStats().compiles;
  for (let r = 0; r < 20; r++) {
    const request = normalizeRequest(JSON.parse(JSON.stringify({ model: 'm', messages: [], tools })));
    const out = run(check, { request, response: response({ finishReason: 'tool_calls', message: { toolCalls: calls } }) });
    assert.equal(out.findings.length, 100);
  }
  assert.equal(validatorStats().compiles - mid, 1);
});

test('the table is bounded, and two schemas with the same $id do not clash', () => {
  for (let i = 0; i < MAX_VALIDATORS + 50; i++) validatorFor(schema(i));
  assert.ok(validatorStats().kept <= MAX_VALIDATORS);
  const a = validatorFor({ $id: 'https://tools.example/read.json', type: 'object', properties: { x: { type: 'string' } } });
  const b = validatorFor({ $id: 'https://tools.example/read.json', type: 'object', properties: { x: { type: 'integer' } } });
  assert.ok(typeof a === 'function' && typeof b === 'function', String(b));
  assert.equal(a({ x: 's' }), true);
  assert.equal(b({ x: 's' }), false);
  assert.ok(validatorFor({ type: 'nonsense-type' }) instanceof Error, 'a schema Ajv cannot read gives its error');
});

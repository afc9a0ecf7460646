import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import markerPlaceholder from '../../../src/core/checks/marker-placeholder';
import { analyze } from '../../../src/core/analyze';
import { KIMI, run, slice } from './helpers';

const KIMI_PLACEHOLDERS =
  'Reading it.<|reserved_token_163595|><|reserved_token_163597|>functions.read:0<|reserved_token_163598|>{"filePath": "a.ts"}<|reserved_token_163599|><|reserved_token_163596|>';

describe('marker-placeholder', () => {
  test('Kimi markers shown by id are read as markers: the call is recovered and each placeholder is an error', () => {
    const r = run(markerPlaceholder, { nativeText: KIMI_PLACEHOLDERS, model: KIMI });
    assert.equal(r.findings.length, 5);
    assert.ok(r.findings.every((f) => f.severity === 'error'));
    assert.equal(slice(r, r.findings[0]), '<|reserved_token_163595|>');
    assert.match(r.findings[0].message, /<\|tool_calls_section_begin\|>/);
    const a = analyze({ nativeText: KIMI_PLACEHOLDERS, model: KIMI });
    assert.deepEqual(
      a.message.toolCalls.map((c) => [c.name, c.arguments]),
      [['read', '{"filePath": "a.ts"}']],
    );
    assert.equal(a.message.content, 'Reading it.');
  });

  test('without a model id the placeholders still name the family', () => {
    const a = analyze({ nativeText: KIMI_PLACEHOLDERS });
    assert.equal(a.family, 'kimi-k2');
    assert.ok(a.findings.some((f) => f.rule === 'marker-placeholder'));
  });

  test('Qwen3 placeholders, and an unknown id left alone', () => {
    const r = run(markerPlaceholder, {
      nativeText: '<|reserved_token_151657|>\n{"name": "ls", "arguments": {}}\n<|reserved_token_151658|>',
      model: 'qwen/qwen3-32b',
    });
    assert.equal(r.findings.length, 2);
    assert.deepEqual(run(markerPlaceholder, { nativeText: 'odd <|reserved_token_12|> text', model: 'qwen/qwen3-32b' }).findings, []);
    assert.deepEqual(run(markerPlaceholder, { nativeText: 'A plain answer.', model: KIMI }).findings, []);
  });
});

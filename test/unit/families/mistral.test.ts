// Mistral: the [CALL_ID] form of the Mistral Small 3.2 template beside the v11 `NAME[ARGS]{…}` and pre-v11 list forms.
// Fixtures, source beside each:
// - ggml-org/llama.cpp tests/test-chat.cpp @ 0042e2079d3428ba7af410df553202aa7fdf8d7a ("Mistral Small 3.2 - FUNC_BRACKET_TAG
//   format" and "Devstral" blocks: expected names, arguments and ids);
// - sgl-project/sglang python/sglang/srt/function_call/mistral_detector.py @ 0813438c032112acef251f02fc8911044c68ba06
//   (`_clean_text` docstring: the JSON-array form with a space after [TOOL_CALLS]).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('mistral');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

test('mistral: [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…} gives the call with its id (llama.cpp Mistral Small 3.2 tests)', () => {
  let p = parse('[TOOL_CALLS]special_function[CALL_ID]123456789[ARGS]{"arg1": 1}');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, id: '123456789', name: 'special_function', arguments: '{"arg1": 1}' }]);
  assert.deepEqual(slices(p, 'call-id', 0), ['123456789']);
  assert.deepEqual(slices(p, 'call-name', 0), ['special_function']);
  // Parallel calls, one [TOOL_CALLS] each.
  p = parse(
    '[TOOL_CALLS]special_function[CALL_ID]000000001[ARGS]{"arg1": 1}[TOOL_CALLS]special_function_with_opt[CALL_ID]000000002[ARGS]{"arg1": 1, "arg2": 2}',
  );
  assert.deepEqual(p.problems, []);
  assert.deepEqual(
    p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments), c.id]),
    [
      ['special_function', { arg1: 1 }, '000000001'],
      ['special_function_with_opt', { arg1: 1, arg2: 2 }, '000000002'],
    ],
  );
  // The model id picks Mistral, and a healthy [CALL_ID] turn has no finding (the id is no markup inside the name).
  const a = analyze({
    nativeText: 'Let me check.[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}',
    model: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506',
  });
  assert.equal(a.family, 'mistral');
  assert.deepEqual(
    a.findings.filter((x) => x.severity !== 'info'),
    [],
  );
  assert.equal(detectFamily(undefined, '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}')?.format.id, 'mistral');
});

test('mistral: the v11 NAME[ARGS]{…} and the pre-v11 list forms still parse (llama.cpp Devstral tests, SGLang docstring)', () => {
  let p = parse('[TOOL_CALLS]special_function[ARGS]{"arg1": 1}');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'special_function', arguments: '{"arg1": 1}' }]);
  p = parse('Hello, world!\nWhat\'s up?[TOOL_CALLS]special_function[ARGS]{"arg1": 1}');
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, "Hello, world!\nWhat's up?");
  p = parse('[TOOL_CALLS] [{"name": "get_current_weather", "arguments": {"location": "Boston, MA", "unit": "fahrenheit"}}]');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(
    p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [['get_current_weather', { location: 'Boston, MA', unit: 'fahrenheit' }]],
  );
  // The conformance fixtures' closer after a named call.
  assert.deepEqual(parse('[TOOL_CALLS]a[ARGS]{"x": 1}[/TOOL_CALLS]</s>').problems, []);
});

test('mistral: a [CALL_ID] call cut inside its JSON, its id or a marker is flagged as cut off', () => {
  const whole = '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris", "days": 3}';
  assert.deepEqual(codes(parse(whole.slice(0, whole.indexOf('Paris') + 3))), ['call-unclosed']);
  assert.deepEqual(codes(parse(whole.slice(0, whole.indexOf('[ARGS]') - 3))), ['call-unclosed']);
  assert.ok(codes(parse(whole.slice(0, whole.indexOf('[CALL_ID]') + 6))).includes('marker-truncated'));
  for (let i = whole.indexOf('get') + 1; i < whole.length; i++) {
    const p = parse(whole.slice(0, i));
    assert.ok(
      p.problems.length > 0 && p.problems.every((x) => x.code === 'call-unclosed' || x.code === 'marker-truncated'),
      `${whole.slice(0, i)}: ${codes(p).join()}`,
    );
  }
  const broken = analyze({ nativeText: whole.slice(0, whole.indexOf('Paris')), model: 'mistralai/mistral-small-3.2-24b-instruct' });
  assert.ok(
    broken.findings.some((x) => x.severity === 'error'),
    broken.findings.map((x) => x.rule).join(),
  );
});

test('mistral: calls with Mistral ids round-trip with their ids; other messages keep the list form', () => {
  const m = {
    content: 'Reading.',
    toolCalls: [
      { index: 0, id: 'abcdefghi', name: 'read', arguments: '{"path":"a.md"}' },
      { index: 1, id: '123456789', name: 'ls', arguments: '{}' },
    ],
  };
  const r = f.render(m);
  assert.equal(r.text, 'Reading.[TOOL_CALLS]read[CALL_ID]abcdefghi[ARGS]{"path":"a.md"}[TOOL_CALLS]ls[CALL_ID]123456789[ARGS]{}</s>');
  const p = parse(r.text);
  assert.deepEqual(p.message, m);
  assert.deepEqual(p.segments, r.segments);
  const plain = f.render({ toolCalls: [{ index: 0, id: 'call_1', name: 'read', arguments: '{}' }] }).text;
  assert.equal(plain, '[TOOL_CALLS][{"name": "read", "arguments": {}}]</s>');
});

test('mistral: prose with brackets is not flagged', () => {
  const text = 'Use [ARGS] and [CALL_ID] placeholders in the [docs].';
  assert.deepEqual(
    analyze({ nativeText: 'It is sunny in Paris [1].', model: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506' }).findings.filter(
      (x) => x.severity === 'error',
    ),
    [],
  );
  assert.equal(parse(text).message.toolCalls.length, 0);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('functionary-v31');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const errors = (text: string, model = 'meetkai/functionary-small-v3.1') =>
  analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// ggml-org/llama.cpp tests/test-chat.cpp @ 0042e2079d3428ba7af410df553202aa7fdf8d7a (meetkai-functionary-medium-v3.1.jinja)
const LLAMA_CPP_CALL = '<function=special_function>{"arg1": 1}</function>';
const LLAMA_CPP_CONTENT = "Hello, world!\nWhat's up?";

test("functionary-v31: llama.cpp's healthy outputs parse to their calls", () => {
  const one = parse(LLAMA_CPP_CALL);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['special_function', { arg1: 1 }]]);
  assert.deepEqual(slices(one, 'call-name', 0), ['special_function']);
  assert.deepEqual(slices(one, 'arguments', 0), ['{"arg1": 1}']);

  const prose = parse(LLAMA_CPP_CONTENT);
  assert.deepEqual(prose.problems, []);
  assert.equal(prose.message.content, LLAMA_CPP_CONTENT);
  assert.deepEqual(prose.message.toolCalls, []);

  // Several calls back to back, after some content, then the end of turn.
  const two = parse(`Checking.${LLAMA_CPP_CALL}<function=get_weather>{"location": "Paris", "days": [1, 2]}</function><|eot_id|>`);
  assert.deepEqual(two.problems, []);
  assert.equal(two.message.content, 'Checking.');
  assert.deepEqual(calls(two), [
    ['special_function', { arg1: 1 }],
    ['get_weather', { location: 'Paris', days: [1, 2] }],
  ]);
  assert.deepEqual(slices(two, 'end'), ['<|eot_id|>']);
});

test('functionary-v31: <|python_tag|> code is a call to the python tool', () => {
  const p = parse('Let me compute.<|python_tag|>print(2 + 2)<|eom_id|>');
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Let me compute.');
  assert.deepEqual(calls(p), [['python', { code: 'print(2 + 2)' }]]);
});

test('functionary-v31: broken outputs are flagged', () => {
  // Closer missing after a complete object.
  const unclosed = parse('<function=get_weather>{"location": "NYC"}');
  assert.deepEqual(codes(unclosed), ['call-unclosed']);
  assert.deepEqual(calls(unclosed), [['get_weather', { location: 'NYC' }]]);
  // Cut inside a value: the call is kept with what arrived.
  const cut = parse('<function=get_weather>{"location": "N');
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.equal(cut.message.toolCalls[0].arguments, '{"location": "N');
  // Cut while the closer was being written: the object is whole, only the closer is missing.
  const closer = parse('<function=special_function>{"arg1": 1}</func');
  assert.deepEqual(codes(closer).sort(), ['call-unclosed', 'marker-truncated']);
  assert.deepEqual(calls(closer), [['special_function', { arg1: 1 }]]);
  const lt = parse('<function=special_function>{"arg1": 1}<');
  assert.deepEqual(codes(lt), ['call-unclosed']);
  assert.deepEqual(calls(lt), [['special_function', { arg1: 1 }]]);
  // An orphan closer, and text after the arguments.
  assert.deepEqual(codes(parse('{"arg1": 1}</function>')), ['stray-marker']);
  assert.deepEqual(codes(parse('<function=f>{"a": 1} and more</function>')), ['malformed-call']);
  assert.deepEqual(codes(parse('<function=f>not json</function>')), ['malformed-call']);
});

test('functionary-v31: model ids and markers pick the family; Qwen3-Coder keeps its XML', () => {
  for (const id of [
    'meetkai/functionary-small-v3.1',
    'meetkai/functionary-medium-v3.1',
    'functionary-small-v3.1-GGUF',
    'meetkai/functionary-medium-v3.1-fp8',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'functionary-v31', id);
  }
  for (const id of ['meetkai/functionary-small-v3.2', 'meetkai/functionary-small-v2.5'])
    assert.notEqual(detectFamily(id)?.format.id, 'functionary-v31', id);
  assert.equal(detectFamily(undefined, LLAMA_CPP_CALL)?.format.id, 'functionary-v31');
  assert.equal(detectFamily(undefined, `Sure.${LLAMA_CPP_CALL}<|eot_id|>`)?.format.id, 'functionary-v31');
  assert.equal(
    detectFamily(undefined, '<tool_call>\n<function=ls>\n<parameter=dirPath>\nsrc\n</parameter>\n</function>\n</tool_call>')?.format.id,
    'qwen3-coder',
  );
  assert.equal(detectFamily(undefined, '<function=ls>\n</function>')?.format.id, 'qwen3-coder');
  assert.equal(f.detectText('The <function> tag and a {brace}.'), 0);
});

test('functionary-v31: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: `${LLAMA_CPP_CALL}<|eot_id|>`, model: 'meetkai/functionary-small-v3.1' });
  assert.equal(healthy.family, 'functionary-v31');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => c.name),
    ['special_function'],
  );
  assert.ok(errors('<function=get_weather>{"location": "N').some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors(LLAMA_CPP_CONTENT), []);
});

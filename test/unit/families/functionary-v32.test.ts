import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('functionary-v32');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'meetkai/functionary-small-v3.2';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// ggml-org/llama.cpp tests/test-chat.cpp @ 0042e2079d3428ba7af410df553202aa7fdf8d7a (meetkai-functionary-medium-v3.2.jinja:
// the completion follows the prompt's `>>>`).
const CONTENT = "all\nHello, world!\nWhat's up?";
const CALL = 'special_function\n{"arg1": 1}';
// ochafik/llama.cpp tests/chat-parsers/test-functionary-v3-2.cpp @ 2d90b10e61da8d952d3b8e5af10b5eecd2bf33ec
const CONTENT_AND_CALL = 'all\nHello, world!\nnono\nWhat\'s up?>>>special_function\n{"arg1": 1}\n';
const PYTHON = "python\n# This is a program:\nprint('hey')";
const TRAILING = 'special_function\n{"arg1": 1} \n                    ';

test("functionary-v32: llama.cpp's healthy outputs parse to their calls", () => {
  const content = parse(CONTENT);
  assert.deepEqual(content.problems, []);
  assert.equal(content.message.content, "Hello, world!\nWhat's up?");
  assert.deepEqual(content.message.toolCalls, []);
  const one = parse(CALL);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['special_function', { arg1: 1 }]]);
  assert.deepEqual(slices(one, 'call-name', 0), ['special_function']);
  assert.deepEqual(slices(one, 'arguments', 0), ['{"arg1": 1}']);
  const both = parse(CONTENT_AND_CALL);
  assert.deepEqual(both.problems, []);
  assert.equal(both.message.content, "Hello, world!\nnono\nWhat's up?");
  assert.deepEqual(calls(both), [['special_function', { arg1: 1 }]]);
  const python = parse(PYTHON);
  assert.deepEqual(python.problems, []);
  assert.deepEqual(calls(python), [['python', { code: "# This is a program:\nprint('hey')" }]]);
  assert.deepEqual(parse(TRAILING).problems, []);
  // A completion that writes the first `>>>` itself, several calls, the end of turn.
  const several = parse('>>>get_weather\n{"location": "Paris"}>>>get_time\n{"tz": "CET"}<|eot_id|>');
  assert.deepEqual(several.problems, []);
  assert.deepEqual(calls(several), [
    ['get_weather', { location: 'Paris' }],
    ['get_time', { tz: 'CET' }],
  ]);
  // A reply without a recipient line, and a Python prompt in prose, are content.
  for (const prose of ['Hello, world!', 'all\nIn Python, >>> print(1) shows the prompt.']) {
    const p = parse(prose);
    assert.deepEqual(p.problems, [], prose);
    assert.deepEqual(p.message.toolCalls, [], prose);
  }
});

test('functionary-v32: broken outputs are flagged', () => {
  const cut = parse('special_function\n{"arg1": ');
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.equal(cut.message.toolCalls[0].arguments, '{"arg1":');
  // The last of several calls cut off; a call cut inside its recipient line.
  assert.deepEqual(codes(parse('all\nChecking.>>>get_weather\n{"location": "Paris"}>>>get_weather\n{"location": "Ro')), ['call-unclosed']);
  assert.deepEqual(codes(parse('all\nChecking.>>>get_wea')), ['call-unclosed']);
  // Arguments that are not JSON, and text after them.
  assert.deepEqual(codes(parse('all\nHi>>>special_function\nnot json>>>all\nok')), ['malformed-call']);
  assert.deepEqual(codes(parse('special_function\n{"arg1": 1} and more>>>all\nok')), ['malformed-call']);
});

test('functionary-v32: model ids and recipient lines pick the family; v3.1 keeps its own', () => {
  for (const id of ['meetkai/functionary-small-v3.2', 'meetkai/functionary-medium-v3.2', 'meetkai/functionary-small-v3.2-GGUF']) {
    assert.equal(detectFamily(id)?.format.id, 'functionary-v32', id);
  }
  assert.equal(detectFamily('meetkai/functionary-small-v3.1')?.format.id, 'functionary-v31');
  assert.equal(detectFamily(undefined, `>>>${CONTENT}`)?.format.id, 'functionary-v32');
  assert.equal(detectFamily(undefined, 'Sure.>>>special_function\n{"arg1": 1}')?.format.id, 'functionary-v32');
  assert.equal(detectFamily(undefined, '>>> import os\n>>> os.getcwd()'), undefined);
});

test('functionary-v32: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: CONTENT_AND_CALL, model: MODEL });
  assert.equal(healthy.family, 'functionary-v32');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => c.name),
    ['special_function'],
  );
  assert.ok(errors('special_function\n{"arg1": ').some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors(CONTENT), []);
});

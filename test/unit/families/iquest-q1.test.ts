import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('iquest-q1');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'IQuestLab/IQuest-Q1';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// sgl-project/sglang test/registered/unit/function_call/test_iquest_q1_detector.py @ 0adff0bcb4193f0d6ae0ea69d3197abebfdc12bf
const CALL =
  '<iquest_tool_call>run\n<arg_key>code</arg_key><arg_value>  "123"\n</arg_value><arg_key>count</arg_key> <arg_value>42</arg_value>\n<arg_key>enabled</arg_key><arg_value>true</arg_value><arg_key>items</arg_key><arg_value>[1, null]</arg_value></iquest_tool_call>';
const EXPECTED = { code: '  "123"\n', count: 42, enabled: true, items: [1, null] };
const WEATHER =
  '查询中。<iquest_tool_call>get_weather\n<arg_key>city</arg_key><arg_value>北京</arg_value>\n</iquest_tool_call><|iquest_end|>';
const MALFORMED = '<iquest_tool_call>run<arg_key>count</arg_key><arg_value>1</iquest_tool_call>';
const INCOMPLETE = 'before<iquest_tool_call>run<arg_key>code</arg_key>';

test("iquest-q1: SGLang's healthy outputs parse to their calls", () => {
  const one = parse(`Running now. ${CALL}`);
  assert.deepEqual(one.problems, []);
  assert.equal(one.message.content, 'Running now.');
  assert.deepEqual(calls(one), [['run', EXPECTED]]);
  assert.deepEqual(slices(one, 'call-name', 0), ['run']);
  // Text around and between the blocks is content.
  const around = parse(`before${CALL}between${CALL}after`);
  assert.deepEqual(around.problems, []);
  assert.equal(around.message.content, 'before\n\nbetween\n\nafter');
  assert.deepEqual(calls(around), [
    ['run', EXPECTED],
    ['run', EXPECTED],
  ]);
  const weather = parse(WEATHER);
  assert.deepEqual(weather.problems, []);
  assert.equal(weather.message.content, '查询中。');
  assert.deepEqual(calls(weather), [['get_weather', { city: '北京' }]]);
  assert.deepEqual(slices(weather, 'end'), ['<|iquest_end|>']);
  assert.deepEqual(calls(parse('<iquest_tool_call>run</iquest_tool_call>')), [['run', {}]]);
  assert.deepEqual(parse('好的。<|iquest_end|>').problems, []);
});

test('iquest-q1: broken outputs are flagged', () => {
  // A value without its </arg_value> (SGLang leaves the block in content).
  assert.deepEqual(codes(parse(MALFORMED)), ['malformed-call']);
  // Cut off after a key (test_incomplete_call_is_preserved_at_stream_end), inside a value, before the closer.
  assert.deepEqual(codes(parse(INCOMPLETE)), ['call-unclosed']);
  const cut = parse('<iquest_tool_call>get_weather\n<arg_key>city</arg_key><arg_value>Bei');
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.deepEqual(calls(cut), [['get_weather', { city: 'Bei' }]]);
  const unclosed = parse('<iquest_tool_call>get_weather\n<arg_key>city</arg_key><arg_value>北京</arg_value>\n');
  assert.deepEqual(codes(unclosed), ['call-unclosed']);
  // An orphan closer.
  assert.ok(codes(parse('get_weather\n<arg_key>city</arg_key><arg_value>北京</arg_value>\n</iquest_tool_call>')).includes('stray-marker'));
});

test('iquest-q1: model ids and markers pick the family; GLM keeps its tags', () => {
  for (const id of ['IQuestLab/IQuest-Q1', 'iquestlab/iquest-q1-gguf', 'iquest-q1'])
    assert.equal(detectFamily(id)?.format.id, 'iquest-q1', id);
  assert.notEqual(detectFamily('IQuestLab/IQuest-Coder-V1-40B-Instruct')?.format.id, 'iquest-q1');
  assert.equal(detectFamily(undefined, WEATHER)?.format.id, 'iquest-q1');
  assert.equal(
    detectFamily(undefined, '<tool_call>ls\n<arg_key>dirPath</arg_key>\n<arg_value>src</arg_value>\n</tool_call>')?.format.id,
    'glm45',
  );
});

test('iquest-q1: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: WEATHER, model: MODEL });
  assert.equal(healthy.family, 'iquest-q1');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.ok(errors(INCOMPLETE).some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors('好的。<|iquest_end|>'), []);
});

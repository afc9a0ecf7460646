import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { schemaArguments } from '../../../src/core/families/shared';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('dots');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const errors = (text: string, model = 'rednote-hilab/dots.llm1.inst') =>
  analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// sgl-project/sglang test/registered/unit/function_call/test_dots_detector.py @ 04b26f569ffc7035355fd22742692bea2a9c8dc1
// (the same texts in vllm-project/vllm tests/tool_parsers/test_dots_tool_parser.py @ 42955d4cf0fe76f6f8fde6eda78283eae3b03c05)
const TYPED =
  'ok<dots_function_call><invoke name="set_location"><parameter name="location">{"city": "Shanghai"}</parameter><parameter name="days">3</parameter><parameter name="include_weather">true</parameter></invoke></dots_function_call>';
const MULTI_AND_JSON =
  '<dots_function_call><invoke name="search"><parameter name="query">chairs</parameter></invoke><invoke name="open"><parameter name="id">7</parameter></invoke></dots_function_call><dots_function_call>{"name":"search","arguments":{"query":"tables"}}</dots_function_call>';
const BETWEEN =
  'before<dots_function_call><invoke name="search"><parameter name="query">chairs</parameter></invoke></dots_function_call>middle<dots_function_call><invoke name="search"><parameter name="query">tables</parameter></invoke></dots_function_call>after';
const REASONING = 'Need to inspect inputs.</think>Final answer';

test("dots: the engines' healthy outputs parse to their calls", () => {
  const typed = parse(TYPED);
  assert.deepEqual(typed.problems, []);
  assert.equal(typed.message.content, 'ok');
  assert.deepEqual(calls(typed), [['set_location', { location: { city: 'Shanghai' }, days: 3, include_weather: true }]]);
  assert.deepEqual(slices(typed, 'call-name', 0), ['set_location']);
  const multi = parse(MULTI_AND_JSON);
  assert.deepEqual(multi.problems, []);
  assert.deepEqual(calls(multi), [
    ['search', { query: 'chairs' }],
    ['open', { id: 7 }],
    ['search', { query: 'tables' }],
  ]);
  assert.equal(multi.message.toolCalls[2].arguments, '{"query":"tables"}');
  const between = parse(BETWEEN);
  assert.deepEqual(between.problems, []);
  assert.equal(between.message.content, 'before\n\nmiddle\n\nafter');
  assert.deepEqual(calls(between), [
    ['search', { query: 'chairs' }],
    ['search', { query: 'tables' }],
  ]);
  // Qwen3 reasoning, opened by the prompt.
  const reasoning = parse(REASONING);
  assert.deepEqual(reasoning.problems, []);
  assert.equal(reasoning.message.reasoning, 'Need to inspect inputs.');
  assert.equal(reasoning.message.content, 'Final answer');
  // A string parameter that reads as a number stays a string when the request's schema says so.
  const call = parse('<dots_function_call><invoke name="open"><parameter name="id">007</parameter></invoke></dots_function_call>').message
    .toolCalls[0];
  assert.equal(
    schemaArguments(call, [{ name: 'open', parameters: { type: 'object', properties: { id: { type: 'string' } } } }]),
    '{"id":"007"}',
  );
});

test('dots: broken outputs are flagged', () => {
  assert.deepEqual(codes(parse('<dots_function_call>\n<invoke name="search">\n<parameter name="query">chairs</parameter>\n</invoke>')), [
    'section-unclosed',
  ]);
  const cut = parse('<dots_function_call>\n<invoke name="search">\n<parameter name="query">cha');
  assert.deepEqual(codes(cut).sort(), ['call-unclosed', 'section-unclosed']);
  assert.deepEqual(calls(cut), [['search', { query: 'cha' }]]);
  assert.deepEqual(codes(parse('<dots_function_call>{"name":"search","arguments":{"query":"tab')).sort(), [
    'call-unclosed',
    'section-unclosed',
  ]);
  // The engines' malformed block, an invoke outside any block, an orphan end.
  assert.deepEqual(codes(parse('<dots_function_call>garbage</dots_function_call>')), ['malformed-call']);
  assert.deepEqual(codes(parse('<invoke name="search"><parameter name="query">chairs</parameter></invoke>\n</dots_function_call>')), [
    'malformed-call',
  ]);
  assert.deepEqual(codes(parse('some text </dots_function_call>')), ['stray-marker']);
  const prose = parse('answer <dots_func');
  assert.deepEqual(codes(prose), ['marker-truncated']);
});

test('dots: model ids and markers pick the family', () => {
  for (const id of ['rednote-hilab/dots.llm1.inst', 'rednote-hilab/dots.llm1.base', 'rednote-hilab/dots.llm2'])
    assert.equal(detectFamily(id)?.format.id, 'dots', id);
  assert.notEqual(detectFamily('someone/polka-dots-7b')?.format.id, 'dots');
  assert.equal(detectFamily(undefined, TYPED)?.format.id, 'dots');
  assert.equal(
    detectFamily(undefined, '<minimax:tool_call>\n<invoke name="ls">\n</invoke>\n</minimax:tool_call>')?.format.id,
    'minimax-m2',
  );
});

test('dots: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: `${TYPED}<|endofresponse|>`, model: 'rednote-hilab/dots.llm1.inst' });
  assert.equal(healthy.family, 'dots');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.equal(healthy.message.toolCalls.length, 1);
  assert.ok(errors('<dots_function_call>\n<invoke name="search">\n<parameter name="query">cha').some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors('Plain answer, no tools.'), []);
});

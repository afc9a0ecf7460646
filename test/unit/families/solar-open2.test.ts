import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { schemaArguments } from '../../../src/core/families/shared/schema-types';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('solar-open2');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'upstage/Solar-Open2-250B';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_solar_open2_tool_parser.py @ 0064cc9cb1ae57b1308015d48a57462fa27a68f2
const SEOUL = '<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>';
const TOKYO = '<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Tokyo<|tool_arg:end|>\n<|tool_call:end|>';
const MULTI = `I'll check both.${SEOUL}\n${TOKYO}`;
const SEARCH =
  '<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>vLLM tutorial<|tool_arg:end|>\n<|tool_arg:start|>max_results<|tool_arg:value|>5<|tool_arg:end|>\n<|tool_call:end|>';
const NO_ARGS = '<|tool_call:start|>get_time\n<|tool_call:end|>';
const REASONING = `<|think:start|>I should use a tool<|think:end|>Sure, let me help.${SEOUL}`;
const UNTERMINATED = 'Let me check.<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>Seo';
// A Solar Open2 serving project's fixture: the prompt opened <|think:start|>, the completion only closes it.
const IMPLICIT =
  'I should inspect the directory.<|think:end|><|tool_call:start|>list_files\n<|tool_arg:start|>path<|tool_arg:value|>/tmp<|tool_arg:end|>\n<|tool_call:end|>';

test("solar-open2: vLLM's healthy outputs parse to their calls", () => {
  const one = parse(SEOUL);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['get_weather', { city: 'Seoul' }]]);
  assert.deepEqual(slices(one, 'call-name', 0), ['get_weather']);
  const multi = parse(MULTI);
  assert.deepEqual(multi.problems, []);
  assert.equal(multi.message.content, "I'll check both.");
  assert.deepEqual(calls(multi), [
    ['get_weather', { city: 'Seoul' }],
    ['get_weather', { city: 'Tokyo' }],
  ]);
  // Typed by the request's schema as vLLM types it (test_multiple_arguments_with_schema).
  const search = parse(SEARCH);
  assert.deepEqual(search.problems, []);
  const tools = [
    { name: 'search', parameters: { type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'integer' } } } },
  ];
  assert.deepEqual(JSON.parse(schemaArguments(search.message.toolCalls[0], tools)), { query: 'vLLM tutorial', max_results: 5 });
  assert.deepEqual(calls(parse(NO_ARGS)), [['get_time', {}]]);
  const reasoning = parse(REASONING);
  assert.deepEqual(reasoning.problems, []);
  assert.equal(reasoning.message.reasoning, 'I should use a tool');
  assert.equal(reasoning.message.content, 'Sure, let me help.');
  const implicit = parse(IMPLICIT);
  assert.deepEqual(implicit.problems, []);
  assert.equal(implicit.message.reasoning, 'I should inspect the directory.');
  assert.deepEqual(calls(implicit), [['list_files', { path: '/tmp' }]]);
  assert.deepEqual(parse('This is a regular response.').problems, []);
});

test('solar-open2: broken outputs are flagged', () => {
  // test_unterminated_block_returns_raw_output: cut inside a value, kept with what arrived.
  const cut = parse(UNTERMINATED);
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.deepEqual(calls(cut), [['search', { query: 'Seo' }]]);
  // Only <|tool_call:end|> missing, and a dropped <|tool_arg:end|>.
  assert.deepEqual(codes(parse(SEOUL.replace(/<\|tool_call:end\|>$/, ''))), ['call-unclosed']);
  assert.ok(
    codes(parse('<|tool_call:start|>broken\n<|tool_arg:start|>a<|tool_arg:value|>oops<|tool_call:end|>')).includes('malformed-call'),
  );
});

test('solar-open2: model ids and markers pick the family', () => {
  for (const id of ['upstage/Solar-Open2-250B', 'solar-open2', 'upstage/solar-open2-250b-nvfp4'])
    assert.equal(detectFamily(id)?.format.id, 'solar-open2', id);
  assert.notEqual(detectFamily('upstage/Solar-Open-100B')?.format.id, 'solar-open2');
  assert.equal(detectFamily(undefined, MULTI)?.format.id, 'solar-open2');
  assert.equal(f.detectText('A <tool_call> tag and a start|> token.'), 0);
});

test('solar-open2: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: MULTI, model: MODEL });
  assert.equal(healthy.family, 'solar-open2');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.ok(errors(UNTERMINATED).some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors('This is a regular response.'), []);
});

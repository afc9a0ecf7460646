import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('olmo3');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const errors = (text: string, model = 'allenai/Olmo-3-7B-Instruct') =>
  analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_olmo3_tool_parser.py @ 2aac44dc3f7b41fca0273ff024fa557c4c7ab1ee
const SIMPLE = "get_weather(city='San Francisco', metric='celsius')";
const SIMPLE_ARGS = { city: 'San Francisco', metric: 'celsius' };
const MORE_TYPES =
  "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])";
const MORE_TYPES_JSON_LITERALS =
  "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=null, passed_test=true, aliases=['John', 'Johnny'])";
const MORE_TYPES_ARGS = {
  name: 'John Doe',
  age: 37,
  address: { city: 'San Francisco', state: 'CA' },
  role: null,
  passed_test: true,
  aliases: ['John', 'Johnny'],
};
const ESCAPED = String.raw`get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')`;
// ollama/ollama model/parsers/olmo3_test.go @ fb30760996871fa9460115c753afd2c60d4ab0f7
const OLLAMA_CONTENT_THEN_CALL = 'Let me check the weather.<function_calls>get_weather(location="NYC")</function_calls>';
const OLLAMA_TWO = '<function_calls>get_weather(location="San Francisco")\nget_weather(location="New York")</function_calls>';
const OLLAMA_NESTED = '<function_calls>create_request(data={"user": {"name": "John", "age": 30}, "active": true})</function_calls>';
const OLLAMA_ESCAPED = '<function_calls>search(query="say \\"hello\\"")</function_calls>';

test("olmo3: the engines' healthy outputs parse to their calls", () => {
  const wrap = (s: string) => `<function_calls>${s}</function_calls>`;
  const simple = parse(wrap(SIMPLE));
  assert.deepEqual(simple.problems, []);
  assert.deepEqual(calls(simple), [['get_weather', SIMPLE_ARGS]]);
  assert.deepEqual(slices(simple, 'call-name', 0), ['get_weather']);
  assert.deepEqual(calls(parse(wrap(MORE_TYPES))), [['register_user', MORE_TYPES_ARGS]]);
  assert.deepEqual(calls(parse(wrap(MORE_TYPES_JSON_LITERALS))), [['register_user', MORE_TYPES_ARGS]]);
  assert.deepEqual(calls(parse(wrap('get_weather()'))), [['get_weather', {}]]);
  assert.deepEqual(calls(parse(wrap('do_something_cool(additional_data={})'))), [['do_something_cool', { additional_data: {} }]]);
  assert.deepEqual(calls(parse(wrap('do_something_cool(steps=[])'))), [['do_something_cool', { steps: [] }]]);
  assert.deepEqual(calls(parse(wrap(ESCAPED))), [['get_weather', { city: "Martha's Vineyard", metric: '"cool units"' }]]);
  const parallel = parse(wrap(`${SIMPLE}\n${MORE_TYPES}`));
  assert.deepEqual(parallel.problems, []);
  assert.deepEqual(calls(parallel), [
    ['get_weather', SIMPLE_ARGS],
    ['register_user', MORE_TYPES_ARGS],
  ]);

  const withContent = parse(OLLAMA_CONTENT_THEN_CALL);
  assert.equal(withContent.message.content, 'Let me check the weather.');
  assert.deepEqual(calls(withContent), [['get_weather', { location: 'NYC' }]]);
  assert.deepEqual(calls(parse(OLLAMA_TWO)), [
    ['get_weather', { location: 'San Francisco' }],
    ['get_weather', { location: 'New York' }],
  ]);
  assert.deepEqual(calls(parse(OLLAMA_NESTED)), [['create_request', { data: { user: { name: 'John', age: 30 }, active: true } }]]);
  assert.deepEqual(calls(parse(OLLAMA_ESCAPED)), [['search', { query: 'say "hello"' }]]);

  const prose = parse('How can I help you today?');
  assert.deepEqual(prose.problems, []);
  assert.deepEqual(prose.message.toolCalls, []);
});

test('olmo3: OLMo 3 Think starts inside reasoning (the prompt opened <think>)', () => {
  const p = parse(`I need the weather.</think>\n${OLLAMA_CONTENT_THEN_CALL}<|im_end|>`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.reasoning, 'I need the weather.');
  assert.deepEqual(calls(p), [['get_weather', { location: 'NYC' }]]);
});

test('olmo3: broken outputs are flagged', () => {
  assert.deepEqual(codes(parse('<function_calls>get_weather(location="NYC")')), ['section-unclosed']);
  const cut = parse('<function_calls>get_weather(location="New Yo');
  assert.deepEqual(codes(cut).sort(), ['call-unclosed', 'section-unclosed']);
  assert.equal(cut.message.toolCalls[0].name, 'get_weather');
  assert.deepEqual(codes(parse('<function_calls>get_weather(location="NYC")</function_ca')).sort(), [
    'marker-truncated',
    'section-unclosed',
  ]);
  // Not keyword literals, and a line that is no call.
  assert.deepEqual(codes(parse('<function_calls>foo("positional")</function_calls>')), ['malformed-call']);
  assert.deepEqual(codes(parse('<function_calls>I will call get_weather now.\nget_weather()</function_calls>')), ['malformed-call']);
  // An orphan closer in content.
  assert.deepEqual(codes(parse('get_weather(location="NYC")</function_calls>')), ['stray-marker']);
});

test('olmo3: model ids and markers pick the family; Claude-style <function_calls> XML does not', () => {
  for (const id of [
    'allenai/Olmo-3-7B-Instruct',
    'allenai/Olmo-3-7B-Think',
    'allenai/Olmo-3.1-32B-Instruct',
    'allenai/olmo-3-7b-instruct',
    'openrouter/allenai/olmo-3.1-32b-think',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'olmo3', id);
  }
  for (const id of ['allenai/OLMo-2-1124-7B-Instruct', 'allenai/olmo-30b']) assert.notEqual(detectFamily(id)?.format.id, 'olmo3', id);
  assert.equal(detectFamily(undefined, OLLAMA_TWO)?.format.id, 'olmo3');
  assert.equal(f.detectText('<function_calls>\n<invoke name="get_weather">\n</invoke>\n</function_calls>'), 0);
});

test('olmo3: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: `${OLLAMA_TWO}<|im_end|>`, model: 'allenai/Olmo-3-7B-Instruct' });
  assert.equal(healthy.family, 'olmo3');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.equal(healthy.message.toolCalls.length, 2);
  assert.ok(errors('<function_calls>get_weather(location="New Yo').some((x) => x.rule === 'call-unclosed'));
  assert.ok(errors('<function_calls>get_weather(location="NYC")').some((x) => x.rule === 'section-unclosed'));
  assert.deepEqual(errors('How can I help you today?'), []);
});

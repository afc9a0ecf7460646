// GLM-5.3-Flash: the GLM-4.7 tag form and the JSON form `<tool_call>NAME>{…}` with no close tag.
//
// Fixtures from sgl-project/sglang test/registered/unit/function_call/test_glm53_flash_detector.py, the revision whose
// docstring says "Earlier revisions of this test file used `<![` as the start marker" (the index holds it without its
// commit; the earlier revision is @ ab63d2bdcb3a12d323bfa34ca9037a8c2b95ba87). Grammar read in
// python/sglang/srt/function_call/glm53_flash_detector.py @ 5ed86bd7b167eb62e084bf479843425c2aa78881.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import type { ParsedNative } from '../../../src/core/model';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const parse = (text: string): ParsedNative => {
  const p = getFormat('glm53-flash').parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
};
const calls = (p: ParsedNative) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);

test("glm53-flash: healthy outputs from SGLang's tests parse to the reference calls", () => {
  const cases: [string, unknown[][], string | undefined][] = [
    // test_json_format_single_call
    ['我来帮您查询。<tool_call>get_weather>{"city": "北京"}', [['get_weather', { city: '北京' }]], '我来帮您查询。'],
    // test_multiple_json_calls
    [
      '<tool_call>get_weather>{"city": "北京"}<tool_call>get_weather>{"city": "上海"}',
      [
        ['get_weather', { city: '北京' }],
        ['get_weather', { city: '上海' }],
      ],
      undefined,
    ],
    // test_tag_format_single_call
    [
      '<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value></tool_call>',
      [['get_weather', { city: '北京' }]],
      undefined,
    ],
    // test_tag_format_multiline
    [
      '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n</tool_call>',
      [['get_weather', { city: '北京' }]],
      undefined,
    ],
    // test_tag_format_typed_values
    [
      '<tool_call>search<arg_key>query</arg_key><arg_value>北京</arg_value><arg_key>limit</arg_key><arg_value>3</arg_value><arg_key>fuzzy</arg_key><arg_value>true</arg_value></tool_call>',
      [['search', { query: '北京', limit: 3, fuzzy: true }]],
      undefined,
    ],
    // test_tag_format_multiple_calls
    [
      '<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value></tool_call><tool_call>get_weather<arg_key>city</arg_key><arg_value>上海</arg_value></tool_call>',
      [
        ['get_weather', { city: '北京' }],
        ['get_weather', { city: '上海' }],
      ],
      undefined,
    ],
    // test_tag_format_then_json_format
    [
      '<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value></tool_call><tool_call>get_weather>{"city": "上海"}',
      [
        ['get_weather', { city: '北京' }],
        ['get_weather', { city: '上海' }],
      ],
      undefined,
    ],
    // test_streaming_multi_tool_todo_bash (the whole text)
    [
      '<tool_call>todo_write>{"todos": [{"content": "write code", "status": "pending"}]}<tool_call>bash>{"command": "ls -la", "description": "List files"}',
      [
        ['todo_write', { todos: [{ content: 'write code', status: 'pending' }] }],
        ['bash', { command: 'ls -la', description: 'List files' }],
      ],
      undefined,
    ],
  ];
  for (const [text, want, content] of cases) {
    const p = parse(text);
    assert.deepEqual(p.problems, [], text);
    assert.deepEqual(calls(p), want, text);
    assert.equal(p.message.content, content, text);
  }
});

test('glm53-flash: the JSON form keeps the arguments as written, with exact segments; a display name is kept as written', () => {
  const text = 'Checking.<tool_call>Weather/get_weather>{"city": "北京"}<|observation|>';
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(slices(p, 'call-name'), ['Weather/get_weather']);
  assert.deepEqual(slices(p, 'arguments'), ['{"city": "北京"}']);
  assert.deepEqual(slices(p, 'call'), ['<tool_call>Weather/get_weather>{"city": "北京"}']);
  assert.deepEqual(slices(p, 'end'), ['<|observation|>']);
  assert.equal(p.message.content, 'Checking.');
});

test('glm53-flash: a <tool_call> inside a JSON string or a tag value is data', () => {
  let p = parse('<tool_call>write>{"content": "use <tool_call>NAME>{…} and </tool_call>"}');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p), [['write', { content: 'use <tool_call>NAME>{…} and </tool_call>' }]]);
  p = parse('<tool_call>write<arg_key>content</arg_key><arg_value>use <tool_call> tags</arg_value></tool_call>');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p), [['write', { content: 'use <tool_call> tags' }]]);
});

test('glm53-flash: broken outputs are flagged', () => {
  // Cut inside the JSON (SGLang delivers the call with {}).
  let p = parse('<tool_call>get_weather>{"city": "北');
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.equal(p.message.toolCalls[0].arguments, '{"city": "北');
  // A tag-form call that lost its </tool_call>.
  p = parse('<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value>');
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.equal(p.problems[0].marker, '</tool_call>');
  // Cut right after the name's >.
  assert.deepEqual(codes(parse('<tool_call>get_weather>')), ['call-unclosed']);
  // test_json_args_wrapped_in_prose: SGLang recovers the {…}; the output is still off the grammar.
  p = parse('<tool_call>get_weather>here: {"city": "北京"} thanks');
  assert.ok(codes(p).includes('malformed-call'));
  assert.deepEqual(calls(p), [['get_weather', { city: '北京' }]]);
  // test_non_streaming_bare_json_array_args: a bare array, which SGLang wraps only when the schema allows.
  p = parse('<tool_call>todo_write>[{"content": "task1", "status": "pending"}]');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /JSON array/);
  // A </tool_call> after the JSON form stays in SGLang's content.
  p = parse('<tool_call>get_weather>{"city": "北京"}</tool_call>');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.deepEqual(calls(p), [['get_weather', { city: '北京' }]]);
  // JSON broken off by the next call.
  p = parse('<tool_call>a>{"x": "1<tool_call>b>{"y": 2}');
  assert.ok(codes(p).includes('malformed-call'));
  assert.equal(p.message.toolCalls.length, 2);
});

test('glm53-flash: the three-character <![ is not a call; plain prose and a > in prose are not flagged', () => {
  // test_three_char_marker_is_not_a_tool_call
  let p = parse('<![get_weather>{"city": "Beijing"}');
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.toolCalls.length, 0);
  p = parse('今天天气不错。 a > b, and {"json": "in prose"}');
  assert.deepEqual(p.problems, []);
  assert.equal(getFormat('glm53-flash').detectText('<![get_weather>{"city": "Beijing"}'), 0);
});

test('glm53-flash: model ids, and the JSON form found by its markers', () => {
  for (const id of ['zai-org/GLM-5.3-Flash', 'z-ai/glm-5.3-flash', 'z-ai/glm-5.3-flash:free', 'zai-org/GLM-5.3-Flash-FP8']) {
    assert.equal(detectFamily(id)?.format.id, 'glm53-flash', id);
  }
  for (const [id, family] of [
    ['z-ai/glm-5.1', 'glm47'],
    ['zai-org/GLM-5', 'glm47'],
    ['z-ai/glm-4.7', 'glm47'],
    ['z-ai/glm-4.6', 'glm45'],
  ] as const) {
    assert.equal(detectFamily(id)?.format.id, family, id);
  }
  assert.equal(detectFamily(undefined, '<tool_call>get_weather>{"city": "北京"}')?.format.id, 'glm53-flash');
  // The tag form alone is GLM-4.7's.
  assert.equal(
    detectFamily(undefined, '<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value></tool_call>')?.format.id,
    'glm47',
  );
  assert.equal(getFamily('glm53-flash').tokenizer.repo, 'zai-org/GLM-5.3-Flash');
});

test('glm53-flash: analyze — the model id picks the family, a broken output is an error, healthy ones and prose are clean', () => {
  const model = 'z-ai/glm-5.3-flash';
  const healthy = analyze({ nativeText: '我来帮您查询。<tool_call>get_weather>{"city": "北京"}<tool_call>get_time>{"tz": "UTC"}', model });
  assert.equal(healthy.family, 'glm53-flash');
  assert.deepEqual(
    healthy.findings.filter((f) => f.severity !== 'info'),
    [],
  );
  assert.deepEqual(
    analyze({ nativeText: '<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value></tool_call>', model }).findings.filter(
      (f) => f.severity !== 'info',
    ),
    [],
  );
  for (const broken of [
    '<tool_call>get_weather>{"city": "北',
    '<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value>',
  ]) {
    const a = analyze({ nativeText: broken, model });
    assert.ok(
      a.findings.some((f) => f.severity === 'error'),
      broken,
    );
  }
  assert.deepEqual(
    analyze({ nativeText: 'It is sunny in Beijing today.', model }).findings.filter((f) => f.severity !== 'info'),
    [],
  );
});

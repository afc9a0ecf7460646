// LongCat (Meituan): <longcat_tool_call> blocks with a JSON body (LongCat-Flash-Chat) or a key/value body (Flash-Lite).
// Fixtures, source beside each:
// - vLLM: vllm-project/vllm tests/tool_parsers/test_longcat_tool_parser.py @ 41c5903d049b80b83a6e570f52f0f55e31316e49
// - SGLang: sgl-project/sglang python/sglang/srt/function_call/longcat_detector.py @ 23d226022f1c69ee493e7ec2e65d7f6035da3a0d
//   (class docstring: `<longcat_tool_call>\n{…}\n</longcat_tool_call>`, calls back to back)
// - the key/value body: ml-explore/mlx-lm mlx_lm/tool_parsers/longcat.py (0.31.3; `_func_name_regex`, `_func_arg_regex`)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('longcat');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

function calls(text: string) {
  return parse(text).message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);
}

test('longcat: healthy outputs from vLLM test_longcat_tool_parser.py parse to the reference calls with no problem', () => {
  const cases: [string, unknown[][]][] = [
    // single_tool_call_output
    [
      '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>',
      [['get_weather', { city: 'Tokyo' }]],
    ],
    // parallel_tool_calls_output
    [
      '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>\n' +
        '<longcat_tool_call>{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}</longcat_tool_call>',
      [
        ['get_weather', { city: 'Tokyo' }],
        ['get_time', { timezone: 'Asia/Tokyo' }],
      ],
    ],
    // various_data_types_output
    [
      '<longcat_tool_call>{\n  "name": "test_function",\n  "arguments": {\n    "string_field": "hello",\n    "int_field": 42,\n    "float_field": 3.14,\n' +
        '    "bool_field": true,\n    "null_field": null,\n    "array_field": ["a", "b", "c"],\n    "object_field": {"nested": "value"},\n' +
        '    "empty_array": [],\n    "empty_object": {}\n  }\n}</longcat_tool_call>',
      [
        [
          'test_function',
          {
            string_field: 'hello',
            int_field: 42,
            float_field: 3.14,
            bool_field: true,
            null_field: null,
            array_field: ['a', 'b', 'c'],
            object_field: { nested: 'value' },
            empty_array: [],
            empty_object: {},
          },
        ],
      ],
    ],
    // empty_arguments_output
    ['<longcat_tool_call>{"name": "refresh", "arguments": {}}</longcat_tool_call>', [['refresh', {}]]],
    // escaped_strings_output
    [
      '<longcat_tool_call>{\n  "name": "test_function",\n  "arguments": {\n    "quoted": "He said \\"hello\\"",\n    "path": "C:\\\\Users\\\\file.txt",\n' +
        '    "newline": "line1\\nline2",\n    "unicode": "emoji: 🎉"\n  }\n}</longcat_tool_call>',
      [['test_function', { quoted: 'He said "hello"', path: 'C:\\Users\\file.txt', newline: 'line1\nline2', unicode: 'emoji: 🎉' }]],
    ],
  ];
  for (const [text, want] of cases) {
    assert.deepEqual(parse(text).problems, [], text);
    assert.deepEqual(calls(text), want, text);
  }
  // surrounding_text_output: the text before and after the call is content.
  const p = parse(
    'Let me check the weather for you.\n<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>\nHere is the result.',
  );
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Let me check the weather for you.\n\nHere is the result.');
  assert.deepEqual(
    p.message.toolCalls.map((c) => c.name),
    ['get_weather'],
  );
});

test('longcat: the SGLang detector form (newlines inside the tags, calls back to back) and the key/value body', () => {
  // LongCatFlashDetector docstring: `<longcat_tool_call>\n{"name":"func1", …}\n</longcat_tool_call><longcat_tool_call>\n…`
  const sg =
    '<longcat_tool_call>\n{"name":"func1", "arguments":{"a": 1}}\n</longcat_tool_call><longcat_tool_call>\n{"name":"func2", "arguments":{"b": "x"}}\n</longcat_tool_call>';
  assert.deepEqual(parse(sg).problems, []);
  assert.deepEqual(calls(sg), [
    ['func1', { a: 1 }],
    ['func2', { b: 'x' }],
  ]);
  // mlx-lm longcat.py: a body that does not start with `{` is the name, then <longcat_arg_key>/<longcat_arg_value> pairs.
  const kv =
    '<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n<longcat_arg_value>Tokyo</longcat_arg_value>\n' +
    '<longcat_arg_key>days</longcat_arg_key>\n<longcat_arg_value>3</longcat_arg_value>\n</longcat_tool_call>';
  assert.deepEqual(parse(kv).problems, []);
  assert.deepEqual(calls(kv), [['get_weather', { city: 'Tokyo', days: 3 }]]);
  // Reasoning in <longcat_think>, the turn's end </longcat_s>.
  const t = parse(
    '<longcat_think>Need the weather.</longcat_think>Checking.\n<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</longcat_tool_call></longcat_s>',
  );
  assert.deepEqual(t.problems, []);
  assert.equal(t.message.reasoning, 'Need the weather.');
  assert.equal(t.message.content, 'Checking.');
});

test('longcat: broken outputs are flagged (vLLM malformed_input_outputs, a missing closer, an orphan closer, a cut value)', () => {
  // malformed_input_outputs[0]: cut inside the arguments.
  assert.ok(codes(parse('<longcat_tool_call>{"name": "func", "arguments": {')).includes('call-unclosed'));
  // malformed_input_outputs[2]: a body that is neither JSON nor key/value, never closed.
  assert.ok(parse('Some text with <longcat_tool_call>invalid json').problems.length > 0);
  // The closer missing after a complete body; a key/value value cut off; a closer cut short.
  assert.deepEqual(codes(parse('<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}')), ['call-unclosed']);
  assert.ok(
    codes(parse('<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n<longcat_arg_value>Tok')).includes(
      'call-unclosed',
    ),
  );
  assert.ok(codes(parse('<longcat_tool_call>\n{"name": "a", "arguments": {}}\n</longcat_tool_ca')).includes('marker-truncated'));
  // An orphan closer in content.
  const orphan = analyze({ nativeText: '{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>', family: 'longcat' });
  assert.ok(
    orphan.findings.some((x) => x.severity === 'error'),
    orphan.findings.map((x) => x.rule).join(),
  );
  // A block whose "arguments" member is missing.
  assert.ok(codes(parse('<longcat_tool_call>{"name": "a"}</longcat_tool_call>')).includes('malformed-call'));
});

test('longcat: plain prose is not flagged and picks no family', () => {
  const prose = 'LongCat-Flash is a 560B MoE model. It answers: the weather in Tokyo is sunny <b>today</b>.';
  assert.deepEqual(parse(prose).problems, []);
  assert.equal(detectFamily(undefined, prose), undefined);
});

test('longcat: model ids and markers pick the family; analyze flags a broken output and passes a healthy one', () => {
  for (const id of [
    'meituan-longcat/LongCat-Flash-Chat',
    'meituan-longcat/LongCat-Flash-Thinking-2601',
    'meituan-longcat/LongCat-Flash-Lite',
    'meituan/longcat-flash-chat',
    'openrouter/meituan/longcat-flash-chat:free',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'longcat', id);
  }
  for (const id of ['meituan-longcat/LongCat-Video', 'meituan-longcat/LongCat-Image', 'openai/gpt-4o'])
    assert.notEqual(detectFamily(id)?.format.id, 'longcat', id);
  assert.equal(detectFamily(undefined, '<longcat_tool_call>{"name": "a", "arguments": {}}</longcat_tool_call>')?.format.id, 'longcat');
  const model = 'meituan-longcat/LongCat-Flash-Chat';
  const healthy = analyze({
    nativeText: 'Checking.\n<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</longcat_tool_call>',
    model,
  });
  assert.equal(healthy.family, 'longcat');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  const broken = analyze({ nativeText: 'Checking.\n<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Tok', model });
  assert.equal(broken.family, 'longcat');
  assert.ok(
    broken.findings.some((x) => x.severity === 'error'),
    broken.findings.map((x) => x.rule).join(),
  );
  assert.equal(getFamily('longcat').tokenizer.repo, 'meituan-longcat/LongCat-Flash-Chat');
});

test('longcat: render writes the SGLang form and round-trips', () => {
  const m = {
    content: 'Checking.',
    toolCalls: [
      { index: 0, name: 'search', arguments: '{"q":"rain"}' },
      { index: 1, name: 'read', arguments: '{"path":"a.md"}' },
    ],
  };
  const text = f.render(m).text;
  assert.ok(
    text.includes('<longcat_tool_call>\n{"name": "search", "arguments": {"q":"rain"}}\n</longcat_tool_call><longcat_tool_call>\n'),
    text,
  );
  assert.ok(text.endsWith('</longcat_s>'), text);
  assert.deepEqual(parse(text).message, m);
});

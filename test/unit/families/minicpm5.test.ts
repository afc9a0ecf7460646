// MiniCPM 4 (XML) and MiniCPM 5: bare <function name="…"><param name="…">…</param></function> blocks.
// Fixtures from the engines' tests, source beside each:
// - SGLang: sgl-project/sglang test/registered/unit/function_call/test_minicpm5_detector.py @ 032cfb6f206222145c6d0b377a90b89d05a3c170
//   and test/registered/function_call/test_minicpm4_xml_detector.py @ b844e97bf0c7533f9a89a33c379a52208464b1cd (the same cases)
// - vLLM: vllm-project/vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py @ 08eaf4cf001acb35879237aa5bf4d504a4a1925d
// - llama.cpp: ggml-org/llama.cpp common/parsers/minicpm5.cpp @ 1107a74237049c80c3dac7c00913f9ae56b958e2 (CDATA, <think>)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('minicpm5');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

function calls(text: string) {
  return parse(text).message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);
}

test('minicpm5: healthy outputs from SGLang test_minicpm5_detector.py parse to the reference calls with no problem', () => {
  const cases: [string, unknown[][]][] = [
    // test_detect_and_parse_cdata_multiline_v3
    [
      '<function name="get_weather"><param name="city"><![CDATA[北\n京]]></param><param name="date">2024-06-27</param></function>\n',
      [['get_weather', { city: '北\n京', date: '2024-06-27' }]],
    ],
    // test_non_string_types_v3
    [
      '<function name="sum_values"><param name="nums">[1, 2, 3]</param><param name="exact">true</param></function>\n',
      [['sum_values', { nums: [1, 2, 3], exact: true }]],
    ],
    // test_no_required_and_zero_param_valid_v3
    ['<function name="noop"></function>\n', [['noop', {}]]],
    // test_malformed_xml_with_unescaped_ampersand_falls_back_to_regex
    ['<function name="get_weather"><param name="city">A & B</param></function>', [['get_weather', { city: 'A & B' }]]],
    // test_streaming_multiple_complete_blocks_in_one_delta
    [
      '<function name="get_weather"><param name="city">北京</param></function><function name="sum_values"><param name="nums">[1,2]</param></function>',
      [
        ['get_weather', { city: '北京' }],
        ['sum_values', { nums: [1, 2] }],
      ],
    ],
  ];
  for (const [text, want] of cases) {
    assert.deepEqual(parse(text).problems, [], text);
    assert.deepEqual(calls(text), want, text);
  }
  // test_detect_and_parse_single_call_v3: the text around the call is content.
  let p = parse(
    'Intro before.\n<function name="get_weather"><param name="city">上海</param><param name="date">2024-06-27</param></function>\nOutro after.\n',
  );
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Intro before.\n\nOutro after.');
  assert.deepEqual(calls(p.text), [['get_weather', { city: '上海', date: '2024-06-27' }]]);
  // test_multiple_calls_interleaved_text_v3
  p = parse(
    'Head\n<function name="get_weather"><param name="city">北京</param></function>\nTXT\n' +
      '<function name="sum_values"><param name="nums">[7,8,9]</param><param name="exact">false</param></function>\nTail\n',
  );
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Head\n\nTXT\n\nTail');
  assert.deepEqual(calls(p.text), [
    ['get_weather', { city: '北京' }],
    ['sum_values', { nums: [7, 8, 9], exact: false }],
  ]);
  // test_streaming_increment_v3, as one text: whitespace between the tags.
  p = parse(
    'Hello\n<function name="get_weather">\n  <param name="city">北京</param>\n  <param name="date">2024-06-27</param>\n</function>\n',
  );
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p.text), [['get_weather', { city: '北京', date: '2024-06-27' }]]);
});

test('minicpm5: vLLM test_minicpm5xml_tool_parser.py, the decoding artifacts it repairs are read and flagged', () => {
  // test_collapsed_function_and_param_tags, test_tokenizer_space_marker: vLLM repairs them, SGLang does not.
  for (const text of [
    '<functionname="get_weather"><paramname="city">上海</param><paramname="date">2024-06-27</param></function>\n',
    '<function\u0120name="get_weather"><param\u0120name="city">上海</param><param\u0120name="date">2024-06-27</param></function>\n',
  ]) {
    const p = parse(text);
    assert.deepEqual(calls(text), [['get_weather', { city: '上海', date: '2024-06-27' }]], text);
    assert.deepEqual(codes(p), ['malformed-call'], text);
    assert.match(p.problems[0].message, /decoding artifact/);
  }
  // Reasoning before the calls (vLLM _strip_thinking_content, llama.cpp's <think>).
  const p = parse(
    '<think>\nFirst, I need to check the weather.\n</think>\n\n<function name="get_weather"><param name="city">Paris</param></function>',
  );
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.reasoning, 'First, I need to check the weather.');
});

test('minicpm5: broken outputs are flagged (test_incomplete_missing_function_end_v3, a cut value, a cut closer, an orphan)', () => {
  // test_incomplete_missing_function_end_v3 (both engines: no call, the text stays)
  assert.deepEqual(codes(parse('<function name="get_weather"><param name="city">北京</param>')), ['call-unclosed']);
  assert.ok(codes(parse('<function name="get_weather"><param name="city">北')).includes('call-unclosed'));
  assert.ok(codes(parse('<function name="get_weather"><param name="city">北京</param></func')).includes('marker-truncated'));
  assert.ok(codes(parse('<function name="get_weather><param name="city">北京</param></function>')).length > 0);
  // vllm-project/vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py @ 08eaf4cf001acb35879237aa5bf4d504a4a1925d
  // test_duplicate_param_names_invalid, test_param_missing_name_invalid: vLLM refuses the call.
  const twice = parse('<function name="get_weather"><param name="city">北京</param><param name="city">上海</param></function>\n');
  assert.deepEqual(codes(twice), ['malformed-call']);
  assert.match(twice.problems[0].message, /'city' written twice/);
  assert.deepEqual(codes(parse('<function name="get_weather"><param>北京</param><param name="date">2024-06-27</param></function>\n')), [
    'malformed-call',
  ]);
  const orphan = analyze({ nativeText: 'Done.<param name="city">北京</param></function>', family: 'minicpm5' });
  assert.ok(
    orphan.findings.some((x) => x.severity === 'error'),
    orphan.findings.map((x) => x.rule).join(),
  );
});

test("minicpm5: plain prose and other families' <function=…> are not read as MiniCPM", () => {
  const prose = 'Call the function with the name parameter, then return. A <b>bold</b> claim: 3 < 4.';
  assert.deepEqual(parse(prose).problems, []);
  assert.equal(detectFamily(undefined, prose), undefined);
  assert.equal(
    detectFamily(undefined, '<tool_call>\n<function=ls>\n<parameter=dir>\nsrc\n</parameter>\n</function>\n</tool_call>')?.format.id,
    'qwen3-coder',
  );
  assert.equal(detectFamily(undefined, '<function name="get_weather"><param name="city">Paris</param></function>')?.format.id, 'minicpm5');
});

test('minicpm5: model ids pick the family; analyze flags a broken output and passes a healthy one', () => {
  for (const id of [
    'openbmb/MiniCPM4-8B',
    'openbmb/MiniCPM4-0.5B',
    'openbmb/MiniCPM4.1-8B',
    'openbmb/MiniCPM5-1B',
    'openbmb/MiniCPM-5-2B',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'minicpm5', id);
  }
  for (const id of ['openbmb/MiniCPM-V-4_5', 'openbmb/MiniCPM-o-4_5', 'openbmb/MiniCPM3-4B'])
    assert.notEqual(detectFamily(id)?.format.id, 'minicpm5', id);
  const model = 'openbmb/MiniCPM5-1B';
  const healthy = analyze({ nativeText: 'Checking.\n<function name="get_weather"><param name="city">Paris</param></function>', model });
  assert.equal(healthy.family, 'minicpm5');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  const broken = analyze({ nativeText: 'Checking.\n<function name="get_weather"><param name="city">Par', model });
  assert.ok(
    broken.findings.some((x) => x.severity === 'error'),
    broken.findings.map((x) => x.rule).join(),
  );
  assert.equal(getFamily('minicpm5').repair.arguments, 'tagged');
});

test('minicpm5: render writes CDATA for the values that need it and round-trips', () => {
  const m = {
    content: 'Editing.',
    toolCalls: [{ index: 0, name: 'edit', arguments: JSON.stringify({ path: 'a.md', text: '<b>x</b>\n', n: '42', k: 3 }) }],
  };
  const text = f.render(m).text;
  assert.ok(
    text.includes('<param name="text"><![CDATA[<b>x</b>\n]]></param>') && text.includes('<param name="n"><![CDATA[42]]></param>'),
    text,
  );
  assert.deepEqual(parse(text).problems, []);
  assert.deepEqual(parse(text).message, m);
});

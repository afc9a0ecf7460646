// Qwen3-Coder XML calls (`<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>…`), checked against the engines'
// newest parser tests: healthy outputs read to the reference calls, every prefix of them is only cut off, and the
// slips the engines repair are read as they read them and flagged.
// Sources:
// - vLLM vllm-project/vllm tests/tool_parsers/test_qwen3coder_tool_parser.py @ 049d8df27dda4fd0caffa289ea12bfe5a47ac794
//   (test_extract_tool_calls, test_extract_tool_calls_missing_closing_parameter_tag, _missing_opening_tag,
//   test_malformed_xml_no_gt_delimiter);
// - vLLM tests/tool_parsers/test_qwen36_bugs.py @ c164555e412e3a867d3fcfb40033020fe879596d (two calls in one delta, an
//   array with JSON `true`);
// - SGLang sgl-project/sglang test/registered/unit/function_call/test_qwen3_coder_detector.py
//   @ 0bbe61a61a1964be3758c1672c5522aa3aafdd6b (a `</parameter>` that drifted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('qwen3-coder');
const CUT = ['section-unclosed', 'call-unclosed', 'marker-truncated', 'reasoning-unclosed'];

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (text: string) => parse(text).message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);

const WEATHER =
  '<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>';
const DALLAS = { city: 'Dallas', state: 'TX', unit: 'fahrenheit' };

test("qwen3-coder: the engines' healthy outputs read to their calls, and every prefix is only cut off", () => {
  const cases: [string, unknown[][], string | undefined][] = [
    // test_extract_tool_calls: single_tool, single_tool_with_content, single_tool_multiline_param, parallel_tools
    [WEATHER, [['get_current_weather', DALLAS]], undefined],
    [`Sure! Let me check the weather for you.${WEATHER}`, [['get_current_weather', DALLAS]], 'Sure! Let me check the weather for you.'],
    [
      '<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>',
      [['calculate_area', { shape: 'rectangle', dimensions: { width: 10, height: 20 }, precision: 2 }]],
      undefined,
    ],
    [
      `${WEATHER}\n${WEATHER.replace('Dallas', 'Orlando').replace('TX', 'FL')}`,
      [
        ['get_current_weather', DALLAS],
        ['get_current_weather', { ...DALLAS, city: 'Orlando', state: 'FL' }],
      ],
      undefined,
    ],
    // test_qwen36_bugs.py: two whole calls in one delta; an array holding JSON true.
    [
      '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nLondon\n</parameter>\n</function>\n</tool_call>',
      [
        ['get_weather', { city: 'Paris' }],
        ['get_weather', { city: 'London' }],
      ],
      undefined,
    ],
    [
      '<tool_call>\n<function=pick>\n<parameter=items>\n["a", "b", 1, true]\n</parameter>\n</function>\n</tool_call>',
      [['pick', { items: ['a', 'b', 1, true] }]],
      undefined,
    ],
    // SGLang test_angle_brackets_inside_value_are_kept, test_closed_value_ending_like_a_marker_is_kept
    [
      '<tool_call>\n<function=get_weather>\n<parameter=city>\na <b>tag</b> city\n</parameter>\n</function>\n</tool_call>',
      [['get_weather', { city: 'a <b>tag</b> city' }]],
      undefined,
    ],
    [
      '<tool_call>\n<function=get_weather>\n<parameter=city>\nx </parameterList>\n</parameter>\n</function>\n</tool_call>',
      [['get_weather', { city: 'x </parameterList>' }]],
      undefined,
    ],
  ];
  for (const [text, want, content] of cases) {
    const p = parse(text);
    assert.deepEqual(p.problems, [], text);
    assert.deepEqual(calls(text), want, text);
    assert.equal(p.message.content, content, text);
    for (let i = 1; i < text.length; i++) {
      assert.deepEqual(
        codes(parse(text.slice(0, i))).filter((c) => !CUT.includes(c)),
        [],
        JSON.stringify(text.slice(0, i)),
      );
    }
  }
});

test('qwen3-coder: a </parameter> that drifted ends its value, as SGLang reads it, and is flagged', () => {
  // SGLang test_non_streaming_strips_drifted_end_marker
  for (const marker of ['</parameter1>', '</parameter_function>', '</parameter']) {
    const text = `<tool_call>\n<function=get_weather>\n<parameter=city>\nShanghai\n${marker}\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>`;
    const p = parse(text);
    assert.deepEqual(calls(text), [['get_weather', { city: 'Shanghai', days: 3 }]], marker);
    assert.deepEqual(codes(p), ['malformed-call'], marker);
    assert.match(p.problems[0].message, /closed by/, marker);
  }
  // A value that only misses its close keeps all its text, and is flagged (vLLM
  // test_extract_tool_calls_missing_closing_parameter_tag reads the same values).
  const missing =
    'Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>';
  assert.deepEqual(calls(missing), [['get_current_weather', DALLAS]]);
  assert.deepEqual(codes(parse(missing)), ['malformed-call']);
  assert.ok(analyze({ nativeText: missing, model: 'Qwen/Qwen3-Coder-30B-A3B-Instruct' }).findings.some((x) => x.severity === 'error'));
});

test('qwen3-coder: a call missing its <tool_call> or the > of its <function=…> is flagged', () => {
  // test_extract_tool_calls_streaming_missing_opening_tag: vLLM's engine parser reads the call; it is off-grammar.
  const noOpen =
    "I'll check the weather for you.\n\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>";
  assert.deepEqual(calls(noOpen), [['get_current_weather', DALLAS]]);
  assert.ok(codes(parse(noOpen)).includes('malformed-call'));
  // test_malformed_xml_no_gt_delimiter
  assert.ok(
    codes(parse('<tool_call>\n<function=get_current_weather\n<parameter=city>Dallas</parameter>\n</function>\n</tool_call>')).includes(
      'malformed-call',
    ),
  );
});

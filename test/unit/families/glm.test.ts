// GLM-4.5 / 4.7 / Ling 3: a value that holds `<tool_call>` is data; GLM-5.3-Flash's JSON form is not a call named
// `NAME>{…}` there; GLM-4.5's `<tool_call>NAME</tool_call>` without the line break is what SGLang drops.
//
// Sources: sgl-project/sglang test/registered/unit/function_call/test_glm4_moe_detector.py @
// 33d0813d223177af28e4a7c668e8e9721e97b760 (test_missing_name_separator_yields_no_calls: `<tool_call>get_weather</tool_call>`
// gives no call; test_streaming_no_args_emits_empty_object: `<tool_call>noop\n</tool_call>` is the healthy no-argument
// call), python/sglang/srt/function_call/glm4_moe_detector.py @ 02911a07fb722f48336cdd3b3a40e8928acb664c
// (`<tool_call>(.*?)(?:\\n|\n)(.*)</tool_call>`), glm47_moe_detector.py @ 010335791ddda6411a36fa77f37929e61c002507
// (`<tool_call>(.*?)(<arg_key>.*?)?</tool_call>`, which reads the no-argument call without a newline),
// ling3_detector.py @ 27dbce0ee7d8ae8feaa7399290b1e7bdc1edb5bc (the name may be closed at once).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import type { FamilyId, ParsedNative } from '../../../src/core/model';
import { assertProblems, assertSegments, codes } from './helpers';

const parse = (family: FamilyId, text: string): ParsedNative => {
  const p = getFormat(family).parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
};
const calls = (p: ParsedNative) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);
const serious = (text: string, model: string) => analyze({ nativeText: text, model }).findings.filter((f) => f.severity !== 'info');

test('a value holding <tool_call> is data (Ling 3, GLM-4.7, GLM-4.5): no finding, the value whole', () => {
  const cases: [FamilyId, string][] = [
    [
      'ling3',
      '<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>docs/format.md</arg_value>\n<arg_key>content</arg_key>\n<arg_value>use <tool_call> tags</arg_value>\n</tool_call>',
    ],
    [
      'glm47',
      '<tool_call>write_file<arg_key>path</arg_key><arg_value>docs/format.md</arg_value><arg_key>content</arg_key><arg_value>use <tool_call> tags</arg_value></tool_call>',
    ],
    [
      'glm45',
      '<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>docs/format.md</arg_value>\n<arg_key>content</arg_key>\n<arg_value>use <tool_call> tags</arg_value>\n</tool_call>',
    ],
  ];
  for (const [family, text] of cases) {
    const p = parse(family, text);
    assert.deepEqual(p.problems, [], family);
    assert.deepEqual(calls(p), [['write_file', { path: 'docs/format.md', content: 'use <tool_call> tags' }]], family);
    assert.deepEqual(
      analyze({ nativeText: text, family }).findings.filter((f) => f.severity !== 'info'),
      [],
      family,
    );
  }
  // A call written after such a call is still its own call.
  const p = parse(
    'glm47',
    '<tool_call>write<arg_key>content</arg_key><arg_value>see <tool_call>x</arg_value></tool_call><tool_call>ls</tool_call>',
  );
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p), [
    ['write', { content: 'see <tool_call>x' }],
    ['ls', {}],
  ]);
});

test('a value cut off before its </arg_value> still ends at the next call (the markup is not swallowed)', () => {
  const p = parse(
    'glm47',
    '<tool_call>a<arg_key>k</arg_key><arg_value>cut<tool_call>b<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>',
  );
  assert.equal(p.message.toolCalls.length, 2);
  assert.ok(codes(p).length > 0);
});

test("GLM-5.3-Flash's JSON form met by GLM-4.5 / 4.7 / Ling 3: read as NAME with its JSON, flagged", () => {
  for (const family of ['glm45', 'glm47', 'ling3'] as FamilyId[]) {
    const p = parse(family, '<tool_call>get_weather>{"city": "Beijing"}');
    assert.deepEqual(codes(p), ['malformed-call'], family);
    assert.match(p.problems[0].message, /GLM-5\.3-Flash's JSON call form/);
    assert.deepEqual(calls(p), [['get_weather', { city: 'Beijing' }]], family);
  }
  const a = analyze({ nativeText: '<tool_call>get_weather>{"city": "Beijing"}</tool_call>', model: 'z-ai/glm-4.7' });
  assert.ok(a.findings.some((f) => f.rule === 'malformed-call' && f.severity === 'error'));
  assert.ok(!a.findings.some((f) => /get_weather>/.test(f.message) && f.rule === 'tool-unknown'));
});

test('GLM-4.5: <tool_call>NAME</tool_call> without the line break is flagged (SGLang drops it); with it, healthy', () => {
  let p = parse('glm45', '<tool_call>get_weather</tool_call>');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /SGLang's GLM-4\.5 parser \(glm45\).*drops this one/);
  assert.deepEqual(calls(p), [['get_weather', {}]]);
  assert.ok(
    serious('<tool_call>get_weather</tool_call>', 'z-ai/glm-4.6').some((f) => f.rule === 'malformed-call' && f.severity === 'error'),
  );
  for (const healthy of ['<tool_call>noop\n</tool_call>', '<tool_call>noop\\n</tool_call>']) {
    p = parse('glm45', healthy);
    assert.deepEqual(p.problems, [], healthy);
    assert.deepEqual(calls(p), [['noop', {}]]);
  }
});

test('GLM-4.7 and Ling 3 write a no-argument call closed at once: healthy, and such text reads as GLM-4.7', () => {
  for (const family of ['glm47', 'ling3'] as FamilyId[]) {
    const p = parse(family, '<tool_call>get_current_date</tool_call>');
    assert.deepEqual(p.problems, [], family);
    assert.deepEqual(calls(p), [['get_current_date', {}]]);
  }
  assert.deepEqual(serious('<tool_call>get_current_date</tool_call>', 'z-ai/glm-4.7'), []);
  // No model id: the GLM-4.7 mark decides, so the call is not judged by GLM-4.5's rule.
  assert.equal(detectFamily(undefined, '<tool_call>get_current_date</tool_call>')?.format.id, 'glm47');
  assert.deepEqual(
    analyze({ nativeText: '<tool_call>get_current_date</tool_call>' }).findings.filter((f) => f.severity !== 'info'),
    [],
  );
  // The GLM-4.5 layout still reads as GLM-4.5.
  assert.equal(
    detectFamily(undefined, '<tool_call>ls\n<arg_key>dirPath</arg_key>\n<arg_value>src</arg_value>\n</tool_call>')?.format.id,
    'glm45',
  );
});

test('GLM-4.7: a <tool_call> with no call right before another is stray, and the real call is read (vLLM #60703)', () => {
  // vllm-project/vllm tests/parser/engine/test_glm47_stray_tool_call.py @ 6acf0c21a7fdac47e7781c7cf626830540ea485f
  let p = parse('glm47', 'text <tool_call><tool_call>get_weather</tool_call>');
  assert.deepEqual([calls(p), codes(p), p.message.content], [[['get_weather', {}]], ['stray-marker'], 'text']);
  p = parse('glm47', 'prose <tool_call><tool_call>get_weather<arg_key>city</arg_key><arg_value>BJ</arg_value></tool_call>');
  assert.deepEqual([calls(p), codes(p)], [[['get_weather', { city: 'BJ' }]], ['stray-marker']]);
  assert.ok(serious(p.text, 'zai-org/GLM-4.7').length > 0);
  // test_lone_stray_tag: a <tool_call> at the very end is the start of a call cut off.
  assert.deepEqual(codes(parse('glm47', 'text <tool_call>')), ['call-unclosed']);
});

test("GLM-4.7: the engines' streamed outputs read to their calls, and every prefix is only cut off", () => {
  // sgl-project/sglang test/registered/unit/function_call/test_glm47_stream_chunks.py @ 94a38457b0dcc9d28441e6aaceb9b6b6ad9fd332
  // (test_partition_invariance_with_normal_text_and_no_args, test_single_call_arguments_are_not_repeated) and
  // vllm-project/vllm tests/tool_parsers/test_glm47_final_delta_bug.py @ 5637b791b2befedcbbac82d07fc03b0bcd452f1e.
  const read = (path: string) => `<tool_call>read_file<arg_key>path</arg_key><arg_value>${path}</arg_value></tool_call>`;
  const cases: [string, unknown[][]][] = [
    [
      `Before: ${read('目录/café.py')} Between: <tool_call>status</tool_call>${read('quote"and\\slash.py')} After.`,
      [
        ['read_file', { path: '目录/café.py' }],
        ['status', {}],
        ['read_file', { path: 'quote"and\\slash.py' }],
      ],
    ],
    [
      '<tool_call>search<arg_key>path_prefix</arg_key><arg_value>Doc/library/glob.rst</arg_value><arg_key>max_matches</arg_key><arg_value>5</arg_value><arg_key>query</arg_key><arg_value>filenames starting with</arg_value></tool_call>',
      [['search', { path_prefix: 'Doc/library/glob.rst', max_matches: 5, query: 'filenames starting with' }]],
    ],
    [
      '<tool_call>get_weather\n<arg_key>city</arg_key><arg_value>Beijing</arg_value><arg_key>date</arg_key><arg_value>2025-08-01</arg_value></tool_call>',
      [['get_weather', { city: 'Beijing', date: '2025-08-01' }]],
    ],
  ];
  for (const [text, want] of cases) {
    const p = parse('glm47', text);
    assert.deepEqual([p.problems, calls(p)], [[], want], text);
    for (let i = 1; i < text.length; i++) {
      const bad = codes(parse('glm47', text.slice(0, i))).filter(
        (c) => !['call-unclosed', 'marker-truncated', 'section-unclosed'].includes(c),
      );
      assert.deepEqual(bad, [], JSON.stringify(text.slice(0, i)));
    }
  }
});

// Tencent Hunyuan HY-v4 ('hunyuan') and HY-v3 ('hunyuan-v3'): GLM-style tags in a <tool_calls> section, each token
// carrying the checkpoint's suffix.
//
// Fixtures:
// - vllm-project/vllm tests/tool_parsers/test_hy_v4_tool_parser.py @ ec305d0260b97c07f2465a2638d5d5112e0e7e13 (SUFFIX
//   ":opensource", `block(call(name, arg(k, v)))`, MALFORMED, test_regex_metacharacters_in_suffix);
// - vllm-project/vllm tests/tool_parsers/test_hy_truncated_stream.py @ 19fd05f548cc4500baf8d15f0af386c008fd831d (the
//   Hy3-preview and Hy4-preview layouts, outputs cut after a value and inside one);
// - sgl-project/sglang test/registered/unit/function_call/test_hunyuan_detector.py @ 56741662b7974bbf293b3e83dd6d3b88e581fa4b
//   (HY-v3 form) and @ 0ff9c986c7d25f30d8bf16c9e1b0ffeab3bcc0cf (test_hy4_format_without_tool_separator).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import { prepare, runChecks } from '../../../src/core/analyze';
import { verdictsFor } from '../../../src/core/checks/engine-verdicts';
import type { FamilyId, ParsedNative } from '../../../src/core/model';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const S = ':opensource';
const arg = (k: string, v: string, s = S) => `<arg_key${s}>${k}</arg_key${s}><arg_value${s}>${v}</arg_value${s}>`;
const call = (name: string, args = '', s = S) => `<tool_call${s}>${name}${args}</tool_call${s}>`;
const block = (body: string, s = S) => `<tool_calls${s}>${body}</tool_calls${s}>`;
// HY-v3 (SGLang's layout): newline separated, <tool_sep> after the name.
const hy3 = (name: string, pairs: [string, string][] = []) =>
  `<tool_call>${name}<tool_sep>\n${pairs.map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${v}</arg_value>\n`).join('')}</tool_call>`;

const parse = (family: FamilyId, text: string): ParsedNative => {
  const p = getFormat(family).parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
};
const calls = (p: ParsedNative) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);
const serious = (text: string, model: string) => analyze({ nativeText: text, model }).findings.filter((f) => f.severity !== 'info');

test("hunyuan (HY-v4): healthy outputs from vLLM's and SGLang's tests parse to the reference calls", () => {
  const cases: [string, unknown[][], string | undefined][] = [
    // test_values_typed_from_schema (the schema types days; untyped, "3" reads as 3)
    [
      'sure!' + block(call('get_weather', arg('city', 'Beijing') + arg('days', '3'))),
      [['get_weather', { city: 'Beijing', days: 3 }]],
      'sure!',
    ],
    // test_zero_arg_call
    [block(call('get_current_date')), [['get_current_date', {}]], undefined],
    // test_multiple_calls_keep_their_order
    [
      block(call('get_weather', arg('city', 'A')) + call('get_current_date')),
      [
        ['get_weather', { city: 'A' }],
        ['get_current_date', {}],
      ],
      undefined,
    ],
    // test_non_ascii_values_are_not_escaped
    [block(call('get_weather', arg('city', '北京'))), [['get_weather', { city: '北京' }]], undefined],
    // test_hy4_complete_stream_is_unchanged (Hy4-preview layout)
    [
      `<tool_calls${S}>\n<tool_call${S}>get_weather${arg('city', 'Beijing')}</tool_call${S}>\n</tool_calls${S}>`,
      [['get_weather', { city: 'Beijing' }]],
      undefined,
    ],
    // SGLang test_hy4_format_without_tool_separator
    [block(call('get_weather', arg('city', 'Beijing'))), [['get_weather', { city: 'Beijing' }]], undefined],
    // test_hy4_truncated_with_whitespace_between_tags, closed: a newline between </arg_key> and <arg_value> is read.
    [
      block(call('get_weather', `<arg_key${S}>city</arg_key${S}>\n<arg_value${S}>Beijing</arg_value${S}>`)),
      [['get_weather', { city: 'Beijing' }]],
      undefined,
    ],
    // reasoning before the calls, the end of turn after them
    [
      `Need the weather.</think${S}>Checking.${block(call('get_weather', arg('city', 'Paris')))}<｜hy_eos${S}｜>`,
      [['get_weather', { city: 'Paris' }]],
      'Checking.',
    ],
  ];
  for (const [text, want, content] of cases) {
    const p = parse('hunyuan', text);
    assert.deepEqual(p.problems, [], text);
    assert.deepEqual(calls(p), want, text);
    assert.equal(p.message.content, content, text);
  }
  const p = parse('hunyuan', `Need the weather.</think${S}>${block(call('f'))}<｜hy_eos${S}｜>`);
  assert.equal(p.message.reasoning, 'Need the weather.');
  assert.deepEqual(slices(p, 'end'), [`<｜hy_eos${S}｜>`]);
});

test('hunyuan (HY-v4): a key written twice keeps its later value, as vLLM does streamed and whole', () => {
  // vllm-project/vllm tests/tool_parsers/test_hy_v4_duplicate_arg_key.py @ 23d9778ba516652208e4bdfe65f646b681c7a698 (MODEL_OUTPUT)
  const text =
    '<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>city</arg_key><arg_value>Berlin</arg_value></tool_call>' +
    '<tool_call>get_weather<arg_key>days</arg_key><arg_value>1</arg_value><arg_key>days</arg_key><arg_value>2</arg_value></tool_call></tool_calls>';
  const p = parse('hunyuan', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p), [
    ['get_weather', { city: 'Berlin' }],
    ['get_weather', { days: 2 }],
  ]);
});

test('hunyuan: any suffix the engines accept, and none (test_regex_metacharacters_in_suffix, vLLM docstring :6124c78e)', () => {
  for (const s of [':a+b(c', ':6124c78e', '']) {
    const p = parse('hunyuan', block(call('get_current_date', '', s), s));
    assert.deepEqual(p.problems, [], s);
    assert.deepEqual(calls(p), [['get_current_date', {}]], s);
    const q = parse('hunyuan', block(call('get_weather', arg('city', 'Oslo', s), s), s));
    assert.deepEqual(q.problems, [], s);
    assert.deepEqual(calls(q), [['get_weather', { city: 'Oslo' }]], s);
  }
});

test("hunyuan: tags spelled with another suffix than the checkpoint's are flagged, once", () => {
  const p = parse('hunyuan', block(`<tool_call${S}>get_weather<arg_key>city</arg_key><arg_value>X</arg_value></tool_call${S}>`));
  const mismatch = p.problems.filter((x) => /where the other tool-call tags carry the suffix :opensource/.test(x.message));
  assert.equal(mismatch.length, 1);
  assert.equal(mismatch[0].code, 'malformed-call');
  // Inside a value, another spelling (or the bare GLM token) is data.
  const q = parse('hunyuan', block(call('write', arg('content', 'use <tool_call> and <tool_call:opensource> tags'))));
  assert.deepEqual(q.problems, []);
  assert.deepEqual(calls(q), [['write', { content: 'use <tool_call> and <tool_call:opensource> tags' }]]);
});

test('hunyuan: broken outputs are flagged (vLLM MALFORMED, test_hy_truncated_stream)', () => {
  const MALFORMED: Record<string, string> = {
    missing_tool_calls_end: `<tool_calls${S}>` + call('get_current_date'),
    unbalanced_tool_call: block(`<tool_call${S}>get_weather` + arg('city', 'X')),
    empty_function_name: block(call('')),
    unparsed_argument_payload: block(`<tool_call${S}>get_weather` + arg('city', 'X') + 'JUNK' + `</tool_call${S}>`),
    unbalanced_arg_tags: block(`<tool_call${S}>get_weather<arg_key${S}>city</arg_key${S}></tool_call${S}>`),
    end_before_start: `</tool_calls${S}>` + call('get_current_date') + `<tool_calls${S}>`,
    truncated_after_closed_argument: `<tool_calls${S}>\n<tool_call${S}>get_weather` + arg('city', 'Beijing'),
    truncated_mid_value:
      `<tool_calls${S}>\n<tool_call${S}>get_weather` + arg('city', 'Beijing') + `<arg_key${S}>date</arg_key${S}><arg_value${S}>2026`,
    with_tool_sep: block(`<tool_call${S}>get_weather<tool_sep${S}>` + arg('city', 'X') + `</tool_call${S}>`),
  };
  for (const [name, text] of Object.entries(MALFORMED)) {
    assert.ok(parse('hunyuan', text).problems.length > 0, name);
    assert.ok(
      serious(text, 'tencent/Hy4-preview').some((f) => f.severity === 'error'),
      name,
    );
  }
  const cut = parse('hunyuan', MALFORMED.truncated_mid_value);
  // Without the request's schema the value reads as a number.
  assert.deepEqual(calls(cut), [['get_weather', { city: 'Beijing', date: 2026 }]]);
  assert.ok(codes(cut).includes('call-unclosed'));
});

test("hunyuan-v3 (HY-v3): healthy outputs from SGLang's and vLLM's tests; the released suffixed tokens too", () => {
  const cases: [string, unknown[][], string | undefined][] = [
    // test_zero_arg_inline, test_zero_arg_newline
    ['<tool_calls><tool_call>get_current_date<tool_sep></tool_call></tool_calls>', [['get_current_date', {}]], undefined],
    ['<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>', [['get_current_date', {}]], undefined],
    // test_multiple_args_same_line
    [
      '<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Beijing</arg_value><arg_key>date</arg_key><arg_value>2026-03-30</arg_value></tool_call></tool_calls>',
      [['get_weather', { city: 'Beijing', date: '2026-03-30' }]],
      undefined,
    ],
    // test_args_with_newlines
    [
      `<tool_calls>\n${hy3('get_weather', [
        ['city', 'Beijing'],
        ['date', '2026-03-30'],
      ])}\n</tool_calls>`,
      [['get_weather', { city: 'Beijing', date: '2026-03-30' }]],
      undefined,
    ],
    // test_content_before_tool_call
    ['Checking.<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>', [['get_current_date', {}]], 'Checking.'],
    // test_multiple_tool_calls
    [
      `<tool_calls>\n${hy3('get_weather', [['city', 'Beijing']])}\n${hy3('get_weather', [['city', 'Hangzhou']])}\n</tool_calls>`,
      [
        ['get_weather', { city: 'Beijing' }],
        ['get_weather', { city: 'Hangzhou' }],
      ],
      undefined,
    ],
    // test_three_parallel_tool_calls (calls back to back)
    [
      '<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Tokyo</arg_value></tool_call><tool_call>get_current_date<tool_sep></tool_call></tool_calls>',
      [
        ['get_weather', { city: 'Beijing' }],
        ['get_weather', { city: 'Tokyo' }],
        ['get_current_date', {}],
      ],
      undefined,
    ],
    // The released Hy3 tokens carry :opensource (SGLang resolve_hunyuan_tokens).
    [
      `<tool_calls${S}>\n<tool_call${S}>get_weather<tool_sep${S}>\n<arg_key${S}>city</arg_key${S}>\n<arg_value${S}>Beijing</arg_value${S}>\n</tool_call${S}>\n</tool_calls${S}><｜hy_eos${S}｜>`,
      [['get_weather', { city: 'Beijing' }]],
      undefined,
    ],
  ];
  for (const [text, want, content] of cases) {
    const p = parse('hunyuan-v3', text);
    assert.deepEqual(p.problems, [], text);
    assert.deepEqual(calls(p), want, text);
    assert.equal(p.message.content, content, text);
  }
});

test('hunyuan-v3: a call without <tool_sep>, a call outside <tool_calls>, and cut outputs are flagged', () => {
  const broken = [
    '<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call></tool_calls>',
    '<tool_call>get_current_date<tool_sep></tool_call>',
    // test_hy3_truncated_after_closed_argument, test_hy3_truncated_mid_value, test_hy3_second_call_truncated
    '<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n',
    '<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026',
    `<tool_calls>\n${hy3('get_weather', [['city', 'Beijing']])}\n<tool_call>get_weather<tool_sep>\n<arg_key>date</arg_key>\n<arg_value>2026`,
  ];
  for (const text of broken) {
    assert.ok(parse('hunyuan-v3', text).problems.length > 0, text);
    assert.ok(
      serious(text, 'tencent/Hy3-preview').some((f) => f.severity === 'error'),
      text,
    );
  }
  assert.match(parse('hunyuan-v3', broken[0]).problems[0].message, /no <tool_sep> after the name/);
});

test('hunyuan: plain prose and the Jamba / Hunyuan-A13B JSON list are not Hunyuan markup', () => {
  for (const family of ['hunyuan', 'hunyuan-v3'] as FamilyId[]) {
    const p = parse(family, 'The weather in Beijing is sunny today.');
    assert.deepEqual(p.problems, []);
    assert.equal(getFormat(family).detectText('<tool_calls>[{"name": "get_weather", "arguments": {"city": "Beijing"}}]</tool_calls>'), 0);
  }
  assert.deepEqual(serious('The weather in Beijing is sunny today.', 'tencent/Hy4-preview'), []);
});

test('hunyuan: model ids, and the markup found by its markers', () => {
  const ids: [string, FamilyId | undefined][] = [
    ['tencent/Hy4-preview', 'hunyuan'],
    ['tencent/Hy4-preview-FP8', 'hunyuan'],
    ['tencent/hy4-preview', 'hunyuan'],
    ['tencent/Hy3', 'hunyuan-v3'],
    ['tencent/Hy3-preview', 'hunyuan-v3'],
    ['tencent/Hy3-FP8', 'hunyuan-v3'],
    ['tencent/hy3-preview:free', 'hunyuan-v3'],
    ['tencent-tokenhub/hy3-preview', 'hunyuan-v3'],
  ];
  for (const [id, family] of ids) assert.equal(detectFamily(id)?.format.id, family, id);
  // Other Hunyuan dialects and products are not these families.
  for (const id of [
    'tencent/Hunyuan-A13B-Instruct',
    'tencent/hunyuan-a13b-instruct',
    'tencent/HY-3D-2.1',
    'tencent/Hunyuan-7B-Instruct',
    'hunyuan-turbos-latest',
  ]) {
    assert.ok(!['hunyuan', 'hunyuan-v3'].includes(detectFamily(id)?.format.id ?? ''), id);
  }
  assert.equal(detectFamily(undefined, block(call('get_weather', arg('city', 'Beijing'))))?.format.id, 'hunyuan');
  assert.equal(
    detectFamily(
      undefined,
      '<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>\n</tool_calls>',
    )?.format.id,
    'hunyuan-v3',
  );
  assert.equal(getFamily('hunyuan').tokenizer.repo, 'tencent/Hy4-preview');
  assert.equal(getFamily('hunyuan-v3').tokenizer.repo, 'tencent/Hy3-preview');
});

test('hunyuan: analyze — the model id picks the family, broken is an error, healthy and prose are clean', () => {
  const healthy = analyze({ nativeText: 'sure!' + block(call('get_weather', arg('city', 'Beijing'))), model: 'tencent/Hy4-preview' });
  assert.equal(healthy.family, 'hunyuan');
  assert.deepEqual(
    healthy.findings.filter((f) => f.severity !== 'info'),
    [],
  );
  const broken = analyze({
    nativeText: `<tool_calls${S}>\n<tool_call${S}>get_weather<arg_key${S}>city</arg_key${S}><arg_value${S}>Bei`,
    model: 'tencent/Hy4-preview',
  });
  assert.ok(broken.findings.some((f) => f.severity === 'error'));
  const v3 = analyze({
    nativeText: '<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>',
    model: 'tencent/Hy3-preview',
  });
  assert.equal(v3.family, 'hunyuan-v3');
  assert.deepEqual(
    v3.findings.filter((f) => f.severity !== 'info'),
    [],
  );
});

test('hunyuan: the engine verdicts of a cut HY-v4 call (vLLM hy_v4 strict: the whole output is content)', () => {
  const { ctx } = prepare({
    nativeText: `<tool_calls${S}>\n<tool_call${S}>get_weather<arg_key${S}>location</arg_key${S}><arg_value${S}>N`,
    family: 'hunyuan',
  });
  const f = runChecks(ctx).find((x) => verdictsFor(ctx, x))!;
  const v = verdictsFor(ctx, f)!;
  assert.equal(v.case, '5.c');
  assert.deepEqual(Object.fromEntries(v.engines.map((e) => [e.engine, e.outcome])), {
    vllm: 'content',
    sglang: 'dropped',
    dynamo: 'unsupported',
  });
});

test('hunyuan: closers missing after a complete suffixed value read as conformance case 5.a', () => {
  const { ctx } = prepare({
    nativeText: `<tool_calls${S}>\n<tool_call${S}>get_weather<arg_key${S}>location</arg_key${S}><arg_value${S}>NYC</arg_value${S}>`,
    family: 'hunyuan',
  });
  const f = runChecks(ctx).find((x) => verdictsFor(ctx, x))!;
  assert.equal(verdictsFor(ctx, f)!.case, '5.a');
});

// Gemma 4: string values opened with one quote form and closed with another, and `<|tool_response>` after a call.
// Sources:
// - SGLang sgl-project/sglang test/registered/unit/function_call/test_gemma4_detector_string_delimiters.py
//   @ 206d16683c5812977e01f2e08b54a6210c00cfe2 (the opening `<|"|>` omitted, the closing one kept).
// - Ollama ollama/ollama model/parsers/gemma4_test.go @ fb30760996871fa9460115c753afd2c60d4ab0f7
//   (TestParseGemma4ToolCall_RepairsIssue15315Examples: `pattern:':\s*\w+'<|"|>` and `command:<|"|>ls}`, from
//   ollama/ollama#15315; TestParseGemma4ToolCall_RepairsMultipleProperties; TestGemma4ArgsToJSON mixed raw and Gemma
//   quotes; TestGemma4Parser_IgnoresToolResponseBoundaryAfterToolCall).
// - vLLM vllm-project/vllm tests/tool_parsers/test_gemma4_tool_parser.py @ 027004de3715411197be51ced325705abcf740a7
//   (test_string_delimited_dict_key); vllm/tool_parsers/gemma4_tool_parser.py at the same commit keeps a value that
//   does not start with `<|"|>` as its raw text, quotes and delimiter included (vllm-project/vllm#51284).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('gemma4');
const Q = '<|"|>';
const call = (name: string, args: string) => `<|tool_call>call:${name}{${args}}<tool_call|>`;

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

/** The one call's name and decoded arguments, and the problems. */
function read(name: string, args: string) {
  const p = parse(call(name, args));
  assert.equal(p.message.toolCalls.length, 1, args);
  return { args: JSON.parse(p.message.toolCalls[0].arguments) as unknown, p };
}

test('gemma4: a value opened with one quote form and closed with another is read as the engines that repair it read it, and flagged', () => {
  const cases: [string, string, unknown, RegExp][] = [
    // SGLang test_omitted_opening_delimiter / _with_comma / _in_nested_object / _in_array
    ['web_search', `query:weather in Tokyo${Q}`, { query: 'weather in Tokyo' }, /'query' has no opening quote and is closed with <\|"\|>/],
    ['web_search', `query:Paris, France${Q},limit:5`, { query: 'Paris, France', limit: 5 }, /no opening quote/],
    ['web_search', `filters:{city:Tokyo${Q}},query:${Q}x${Q}`, { filters: { city: 'Tokyo' }, query: 'x' }, /'city' has no opening quote/],
    ['web_search', `query:[${Q}a${Q},b${Q}]`, { query: ['a', 'b'] }, /no opening quote/],
    // Ollama #15315: a single-quoted value closed with a dangling Gemma delimiter
    [
      'grep',
      `include:${Q}*.py${Q},output_mode:${Q}content${Q},path:${Q}/data/robotics/experiment1${Q},pattern:':\\s*\\w+'${Q}`,
      { include: '*.py', output_mode: 'content', path: '/data/robotics/experiment1', pattern: ':\\s*\\w+' },
      /'pattern' is opened with ' and closed with '<\|"\|>/,
    ],
    // Ollama #15315 comment: the Gemma delimiter never closed before the object close
    ['bash', `command:${Q}ls`, { command: 'ls' }, /'command' is opened with <\|"\|> and never closed/],
    // The same string opened with the Gemma delimiter and closed with a JSON quote, and the reverse
    ['f', `q:${Q}abc",n:1`, { q: 'abc', n: 1 }, /opened with <\|"\|> and closed with "/],
    ['f', `q:"abc${Q},n:1`, { q: 'abc', n: 1 }, /opened with " and closed with <\|"\|>/],
    // Ollama single_quoted_middle_property
    [
      'grep',
      `include:${Q}*.py${Q},pattern:'abc',path:${Q}/tmp${Q}`,
      { include: '*.py', pattern: 'abc', path: '/tmp' },
      /'pattern' is quoted with '/,
    ],
  ];
  for (const [name, args, want, why] of cases) {
    const { args: got, p } = read(name, args);
    assert.deepEqual(got, want, args);
    assert.deepEqual(codes(p), ['malformed-call'], args);
    assert.match(p.problems[0].message, why, args);
  }
  const a = analyze({ nativeText: call('web_search', `query:weather in Tokyo${Q}`), model: 'google/gemma-4-26B-A4B-it' });
  assert.equal(a.family, 'gemma4');
  assert.ok(
    a.findings.some((x) => x.rule === 'malformed-call' && x.severity === 'error'),
    JSON.stringify(a.findings),
  );
  assert.deepEqual(
    a.findings.filter((x) => x.rule === 'markup-in-tool-call'),
    [],
  );
});

test('gemma4: well-formed values, quotes inside them, and mixed but matched forms stay clean', () => {
  const cases: [string, string, unknown][] = [
    // SGLang test_well_formed_string, test_other_values_unchanged
    ['web_search', `query:${Q}weather in Tokyo${Q}`, { query: 'weather in Tokyo' }],
    ['web_search', `limit:5,exact:true,query:${Q}Note: a, b${Q}`, { limit: 5, exact: true, query: 'Note: a, b' }],
    // Ollama tool_call_with_mixed_raw_and_gemma_quoted_values, nested_mixed_raw_and_gemma_quoted_values
    ['search', `query:"raw \\"quoted\\"",note:${Q}gemma "quoted"${Q}`, { query: 'raw "quoted"', note: 'gemma "quoted"' }],
    [
      'f',
      `meta:{title:${Q}t "1"${Q},note:"n \\"2\\""},items:[${Q}x "3"${Q},"y \\"4\\""]`,
      { meta: { title: 't "1"', note: 'n "2"' }, items: ['x "3"', 'y "4"'] },
    ],
    // vLLM test_string_delimited_dict_key
    ['f', `record_map:{${Q}3${Q}:${Q}new text${Q}}`, { record_map: { '3': 'new text' } }],
    ['bash', `cmd:${Q}echo "done"${Q}`, { cmd: 'echo "done"' }],
  ];
  for (const [name, args, want] of cases) {
    const { args: got, p } = read(name, args);
    assert.deepEqual(got, want, args);
    assert.deepEqual(p.problems, [], args);
  }
});

test('gemma4: `<|tool_response>` right after a call ends the turn as the chat template does; it is no stray marker', () => {
  // Ollama TestGemma4Parser_IgnoresToolResponseBoundaryAfterToolCall
  for (const [text, content] of [
    [`${call('get_weather', `location:${Q}Paris${Q}`)}<|tool_response>`, undefined],
    [`${call('get_weather', `location:${Q}Paris${Q}`)}<|tool_response>Done.`, 'Done.'],
  ] as const) {
    const p = parse(text);
    assert.deepEqual(p.problems, [], text);
    assert.deepEqual(p.message, {
      ...(content ? { content } : {}),
      toolCalls: [{ index: 0, name: 'get_weather', arguments: '{"location":"Paris"}' }],
    });
    assert.deepEqual(slices(p, 'end'), ['<|tool_response>']);
    const a = analyze({ nativeText: text, model: 'google/gemma-4-31b-it' });
    assert.deepEqual(
      a.findings.filter((x) => x.severity !== 'info'),
      [],
      text,
    );
  }
  // Without a call before it, the marker is still out of place.
  assert.deepEqual(codes(parse('Sure.<|tool_response>')), ['stray-marker']);
});

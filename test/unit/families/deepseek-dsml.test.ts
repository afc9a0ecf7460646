// DeepSeek V3.2 / V4 / V4.1 DSML: the canonical spellings, the spellings seen in the wild, a cut-short DSML tag, and
// DeepSeek model ids as Amazon Bedrock spells them. Sources beside each case:
// - canonical outputs: ggml-org/llama.cpp tests/test-chat.cpp @ 0042e2079d3428ba7af410df553202aa7fdf8d7a (DeepSeek V3.2
//   and V4 PEG tests);
// - other spellings, as agent CLI issue threads report them: NousResearch/hermes-agent#15453 (`< | DSML | tool_calls`),
//   CJackHwang/ds2api#389 (`<|DSML|invoke …>`), AgentFlocks/flocks#687 (`<||DSML||tool_calls>`), diegosouzapw/OmniRoute#14208
//   (`<｜｜DSML｜｜ parameter>`, `</｜｜DSML｜｜ invoke>`), cline/cline#13348 (full-width and ASCII bars both seen);
// - Bedrock ids: docs.aws.amazon.com bedrock/latest/userguide/model-parameters-deepseek.html ("DeepSeek's R1 and V3.1
//   models", `us.deepseek.r1-v1:0`) and model-cards-deepseek (V3.2, V3.1, R1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';
import { assertProblems, assertSegments, codes } from './helpers';

function parse(family: FamilyId, text: string) {
  const p = getFormat(family).parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

function calls(family: FamilyId, text: string) {
  return parse(family, text).message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);
}

const errors = (text: string, model?: string) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

test('dsml: the canonical V3.2 and V4 outputs of llama.cpp test-chat.cpp parse clean into the reference calls', () => {
  // DeepSeek V3.2, "Tool call with content before tool calls"
  const v32 =
    'Thinking about it</think>Let me call the function.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="special_function">\n' +
    '<｜DSML｜parameter name="arg1" string="false">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>';
  let p = parse('deepseek-v32', v32);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.reasoning, 'Thinking about it');
  assert.equal(p.message.content, 'Let me call the function.');
  assert.deepEqual(calls('deepseek-v32', v32), [['special_function', { arg1: 1 }]]);
  assert.deepEqual(errors(v32, 'deepseek-ai/DeepSeek-V3.2'), []);
  // DeepSeek V3.2, "Edge case: tool call with multiple params (mixed types, string first)"
  const mixed =
    'Multi-arg call</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="magic_int">\n<｜DSML｜parameter name="ref" string="false">42</｜DSML｜parameter>\n' +
    '<｜DSML｜parameter name="name" string="true">foo bar</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>';
  assert.deepEqual(calls('deepseek-v32', mixed), [['magic_int', { ref: 42, name: 'foo bar' }]]);
  // DeepSeek V4, "Multiple parallel tool calls with reasoning"
  const v4 =
    'Calling both</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_time">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n' +
    '<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>';
  p = parse('deepseek-v4', v4);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls('deepseek-v4', v4), [
    ['get_time', { city: 'Paris' }],
    ['get_weather', { city: 'Paris' }],
  ]);
  assert.deepEqual(errors(v4, 'deepseek-ai/DeepSeek-V4-Flash'), []);
  assert.equal(detectFamily(undefined, v4)?.format.id, 'deepseek-v4');
  assert.equal(detectFamily(undefined, v32)?.format.id, 'deepseek-v32');
});

test('dsml: an invoke with a JSON body is a call, not a malformed one (SGLang deepseekv32_detector.py "Direct JSON")', () => {
  // sgl-project/sglang python/sglang/srt/function_call/deepseekv32_detector.py @ d51fbf8ccf562f0b7a6516ae230ebb2fae3fffb4, class docstring.
  const text =
    '<｜DSML｜function_calls>\n    <｜DSML｜invoke name="get_favorite_tourist_spot">\n    { "city": "San Francisco" }\n</｜DSML｜invoke>\n</｜DSML｜function_calls>';
  assert.deepEqual(parse('deepseek-v32', text).problems, []);
  assert.deepEqual(calls('deepseek-v32', text), [['get_favorite_tourist_spot', { city: 'San Francisco' }]]);
  // V4.1's JSON body, and one cut short, which stays flagged.
  const v41 = '<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">{"city": "Paris", "days": 3}</｜DSML｜ invoke>\n</｜DSML｜ calls>';
  assert.deepEqual(parse('deepseek-v41', v41).problems, []);
  assert.deepEqual(calls('deepseek-v41', v41), [['get_weather', { city: 'Paris', days: 3 }]]);
  assert.ok(codes(parse('deepseek-v41', v41.slice(0, v41.indexOf('Paris')))).includes('call-unclosed'));
});

test('dsml: doubled bars (<｜｜DSML｜｜ calls>) are read into the calls meant and flagged, naming the spelling', () => {
  const doubled =
    '<｜｜DSML｜｜ calls>\n<｜｜DSML｜｜ invoke name="pwsh">\n<｜｜DSML｜｜ parameter name="command" string="true">git status --porcelain</｜｜DSML｜｜ parameter>\n' +
    '<｜｜DSML｜｜ parameter name="description" string="true">Check git</｜｜DSML｜｜ parameter>\n</｜｜DSML｜｜ invoke>\n</｜｜DSML｜｜ calls>';
  for (const family of ['deepseek-v41', 'deepseek-v4', 'deepseek-v32'] as const) {
    const p = parse(family, doubled);
    assert.deepEqual(calls(family, doubled), [['pwsh', { command: 'git status --porcelain', description: 'Check git' }]], family);
    assert.deepEqual(codes(p), ['malformed-call'], family);
    assert.match(p.problems[0].message, /<｜｜DSML｜｜ calls>.*doubled bars/, family);
  }
  // No model id: still a DSML family (V4.1's, from the space), never "family unknown".
  assert.equal(detectFamily(undefined, doubled)?.format.id, 'deepseek-v41');
  const e = errors(doubled);
  assert.equal(e.length, 1, e.map((x) => x.message).join('\n'));
  assert.match(e[0].message, /doubled bars/);
  // The same without the space, as another agent session logged it: DeepSeek V4's block name.
  const noSpace = doubled.replace(/｜｜DSML｜｜ calls/g, '｜｜DSML｜｜tool_calls').replace(/｜｜DSML｜｜ /g, '｜｜DSML｜｜');
  assert.equal(detectFamily(undefined, noSpace)?.format.id, 'deepseek-v4');
  assert.deepEqual(calls('deepseek-v4', noSpace), [['pwsh', { command: 'git status --porcelain', description: 'Check git' }]]);
  assert.ok(errors(noSpace, 'deepseek/deepseek-v4-pro').some((x) => /doubled bars/.test(x.message)));
});

test('dsml: ASCII bars (<|DSML|invoke …>) and spaced bars (< | DSML | tool_calls>) are read and flagged', () => {
  const ascii =
    'Let me look.\n\n<|DSML|invoke name="terminal">\n<|DSML|parameter name="command" string="true">find /home -type d</|DSML|parameter>\n</|DSML|invoke>';
  const p = parse('deepseek-v4', ascii);
  assert.deepEqual(calls('deepseek-v4', ascii), [['terminal', { command: 'find /home -type d' }]]);
  assert.equal(p.message.content, 'Let me look.');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /<\|DSML\|invoke …>.*ASCII \| bars/);
  assert.ok(detectFamily(undefined, ascii)?.format.id.startsWith('deepseek-v'), 'a DSML family');
  assert.ok(errors(ascii).some((x) => /ASCII/.test(x.message)));
  const spaced =
    '< | DSML | tool_calls>\n< | DSML | invoke name="web_search">\n< | DSML | parameter name="query" string="true">rain in Paris</ | DSML | parameter>\n' +
    '</ | DSML | invoke>\n</ | DSML | tool_calls>';
  assert.equal(detectFamily(undefined, spaced)?.format.id, 'deepseek-v4');
  assert.deepEqual(calls('deepseek-v4', spaced), [['web_search', { query: 'rain in Paris' }]]);
  const s = parse('deepseek-v4', spaced);
  assert.deepEqual(codes(s), ['malformed-call']);
  assert.match(s.problems[0].message, /< \| DSML \| tool_calls>.*spaces around the bars/);
});

test("dsml: a block name of another DeepSeek version is read and flagged for the model id's parser", () => {
  const v4Block =
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_time">\n<｜DSML｜parameter name="city" string="true">Tokyo</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>';
  const p = parse('deepseek-v32', v4Block);
  assert.deepEqual(calls('deepseek-v32', v4Block), [['get_time', { city: 'Tokyo' }]]);
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /DeepSeek V4's spelling.*<｜DSML｜function_calls>/);
  // V4.1's spaced spelling under a V4 model id is accepted (SGLang deepseekv41, Dynamo deepseek_v4): no flag.
  const v41 =
    '<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_time">\n<｜DSML｜ parameter name="city" string="true">Tokyo</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>';
  assert.deepEqual(parse('deepseek-v4', v41).problems, []);
});

test('dsml: a stream cut inside a DSML opener is flagged as cut short, and names the family without a model id', () => {
  const cases: [string, FamilyId][] = [
    ['<｜DSML｜function_ca', 'deepseek-v32'],
    ['Let me check the time.\n\n<｜DSML｜tool_c', 'deepseek-v4'],
    ['Let me check the time.\n\n<｜DSML｜ inv', 'deepseek-v41'],
    ['Let me check the time.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_time">\n<｜DSML｜ par', 'deepseek-v41'],
  ];
  for (const [text, family] of cases) {
    assert.equal(detectFamily(undefined, text)?.format.id, family, text);
    const a = analyze({ nativeText: text });
    assert.equal(a.family, family, text);
    assert.ok(
      a.findings.some(
        (x) => x.severity === 'error' && (x.rule === 'marker-truncated' || x.rule === 'section-unclosed' || x.rule === 'call-unclosed'),
      ),
      `${text}: ${a.findings.map((x) => x.rule).join()}`,
    );
  }
  // With the model id too.
  assert.ok(errors('x <｜DSML｜function_ca', 'deepseek-ai/DeepSeek-V3.2').some((x) => x.rule === 'marker-truncated'));
});

test('dsml: prose that mentions DSML is not flagged', () => {
  for (const text of ['DeepSeek writes its tool calls in DSML.', 'The DSML block starts with a full-width bar marker.']) {
    assert.deepEqual(
      analyze({ nativeText: text, model: 'deepseek-ai/DeepSeek-V3.2' }).findings.filter((x) => x.severity === 'error'),
      [],
      text,
    );
    assert.deepEqual(parse('deepseek-v4', text).problems, [], text);
  }
});

test('dsml: DeepSeek model ids as Bedrock, Hugging Face and OpenRouter spell them pick V3, V3.1, V3.2, V4 or V4.1', () => {
  const cases: [string, FamilyId][] = [
    ['deepseek.v3.2', 'deepseek-v32'],
    ['deepseek.v3.2-v1:0', 'deepseek-v32'],
    ['bedrock/deepseek.v3.2-v1:0', 'deepseek-v32'],
    ['deepseek.v3-v1:0', 'deepseek-v31'],
    ['us.deepseek.v3-v1:0', 'deepseek-v31'],
    ['deepseek.v3.1', 'deepseek-v31'],
    ['deepseek.r1-v1:0', 'deepseek-v3'],
    ['us.deepseek.r1-v1:0', 'deepseek-v3'],
    ['deepseek-ai/DeepSeek-V3-0324', 'deepseek-v3'],
    ['deepseek/deepseek-chat-v3-0324', 'deepseek-v3'],
    ['deepseek/deepseek-r1-0528', 'deepseek-v3'],
    ['deepseek/deepseek-chat-v3.1', 'deepseek-v31'],
    ['deepseek-ai/DeepSeek-V3.1-Terminus', 'deepseek-v31'],
    ['deepseek/deepseek-v3.2', 'deepseek-v32'],
    ['deepseek-ai/DeepSeek-V4-Flash', 'deepseek-v4'],
    ['deepseek-ai/DeepSeek-V4.1-Flash', 'deepseek-v41'],
  ];
  for (const [id, family] of cases) assert.equal(detectFamily(id)?.format.id, family, id);
});

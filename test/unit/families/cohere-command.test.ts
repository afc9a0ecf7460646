import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('cohere-command');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const errors = (text: string, model = 'CohereLabs/c4ai-command-r7b-12-2024') =>
  analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_cohere_command_tool_parser.py @ 6bcd488866e07589f62d793e513368a4eb5818f9
const VLLM_SINGLE = `<|START_THINKING|> i will call foo with query1<|END_THINKING|><|START_ACTION|>
[
    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}}
]
<|END_ACTION|>`;
const VLLM_MULTI = `<|START_THINKING|>first I think about foo<|END_THINKING|><|START_ACTION|>
[
    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}},
    {"tool_call_id": "1", "tool_name": "bar", "parameters": {"x": 42}}
]
<|END_ACTION|>`;
const VLLM_CITATIONS = `<|START_THINKING|>This is a rainbow <co>emoji: 🌈</co: 0:[1]><|END_THINKING|>
<|START_RESPONSE|>foo <co>bar</co: 0:[1,2],1:[3,4]><|END_RESPONSE|>`;
// sgl-project/sglang test/registered/unit/function_call/test_cohere_command4_detector.py @ 30a32393b32212785f05d620bd265452ef505054
const SGLANG_PARALLEL =
  'Sure! <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Tokyo"}}, {"tool_call_id": "0", "tool_name": "search", "parameters": {"query": "ramen"}}]<|END_ACTION|>';
const SGLANG_TRUNCATED = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"';

test("cohere-command: the engines' healthy outputs parse to their calls, plan and reply, with no problem", () => {
  const single = parse(VLLM_SINGLE);
  assert.deepEqual(single.problems, []);
  assert.equal(single.message.reasoning, 'i will call foo with query1');
  assert.deepEqual(calls(single), [['foo', { query: 'query1' }]]);
  // tool_call_id is the call's position, not an id the agent sees.
  assert.equal(single.message.toolCalls[0].id, undefined);

  const multi = parse(VLLM_MULTI);
  assert.deepEqual(multi.problems, []);
  assert.deepEqual(calls(multi), [
    ['foo', { query: 'query1' }],
    ['bar', { x: 42 }],
  ]);

  const reply = parse(VLLM_CITATIONS);
  assert.deepEqual(reply.problems, []);
  assert.deepEqual(reply.message.toolCalls, []);
  // The reply wrappers are markers, and so are a citation's tags: vLLM's Cohere parser moves them to the response's
  // citations and keeps the cited words (vllm-project/vllm tests/parser/cohere/test_tool_calls.py
  // citations_no_tool_calls @ 57eabfad178bb3679faccd50aaa178b93d9bbbb6, for the cmd3 and cmd4 wrappers alike).
  assert.equal(reply.message.content, 'foo bar');
  assert.equal(reply.message.reasoning, 'This is a rainbow emoji: 🌈');
  assert.deepEqual(
    slices(reply, 'marker').filter((m) => m.startsWith('<co') || m.startsWith('</co')),
    ['<co>', '</co: 0:[1]>', '<co>', '</co: 0:[1,2],1:[3,4]>'],
  );
  const text4 = parse(VLLM_CITATIONS.replace(/RESPONSE/g, 'TEXT'));
  assert.deepEqual([text4.message.content, text4.problems], ['foo bar', []]);
  // tests/parser/cohere/test_citations.py TestParserStreamingEndToEnd @ 756794a9a7f08900c00fbfaa6d8332631503f528
  const cited = parse(
    '<|START_THINKING|>Let me check.<|END_THINKING|><|START_RESPONSE|>The capital is <co>Paris</co: 0:[1]>.<|END_RESPONSE|>',
  );
  assert.deepEqual([cited.message.reasoning, cited.message.content, cited.problems], ['Let me check.', 'The capital is Paris.', []]);

  const parallel = parse(SGLANG_PARALLEL);
  assert.deepEqual(parallel.problems, []);
  assert.equal(parallel.message.content, 'Sure!');
  assert.deepEqual(calls(parallel), [
    ['get_weather', { city: 'Tokyo' }],
    ['search', { query: 'ramen' }],
  ]);

  // Command A Plus (cmd4) wraps the reply in <|START_TEXT|>.
  const cmd4 = parse('<|START_THINKING|>Easy.<|END_THINKING|><|START_TEXT|>It is 4.<|END_TEXT|><|END_OF_TURN_TOKEN|>');
  assert.deepEqual(cmd4.problems, []);
  assert.deepEqual(cmd4.message, { reasoning: 'Easy.', content: 'It is 4.', toolCalls: [] });
});

test('cohere-command: a list cut in a value, a missing <|END_ACTION|>, an orphan closer and junk in the list are flagged', () => {
  const cut = parse(SGLANG_TRUNCATED);
  assert.deepEqual(codes(cut), ['section-unclosed', 'call-unclosed']);
  assert.deepEqual(
    cut.message.toolCalls.map((c) => [c.name, c.arguments]),
    [['get_weather', '{"city": "Paris"']],
  );

  const noEnd = parse(VLLM_SINGLE.replace('<|END_ACTION|>', ''));
  assert.deepEqual(codes(noEnd), ['section-unclosed']);
  assert.deepEqual(calls(noEnd), [['foo', { query: 'query1' }]]);

  const orphan = parse('[{"tool_call_id": "0", "tool_name": "foo", "parameters": {}}]<|END_ACTION|>');
  assert.deepEqual(codes(orphan), ['stray-marker']);

  // sgl-project/sglang test_cohere_command4_detector.py test_malformed_body_returns_normal_text @ 30a32393
  const junk = parse('prefix <|START_ACTION|>[not valid json<|END_ACTION|>');
  assert.ok(codes(junk).includes('malformed-call'), codes(junk).join());

  for (const text of [SGLANG_TRUNCATED, VLLM_SINGLE.replace('<|END_ACTION|>', '')]) assert.ok(errors(text).length > 0, text);
  assert.deepEqual(errors(VLLM_SINGLE), []);
  assert.deepEqual(errors(SGLANG_PARALLEL, 'cohere/command-a'), []);
});

test('cohere-command: plain prose is not flagged', () => {
  const p = parse('The weather is nice today. I would call a function named get_weather, with {"city": "Rome"}.');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(errors('The weather is nice today.'), []);
});

test('cohere-command: model ids of Command R7B and Command A pick the family; Command R / R+ do not; the markers tell it too', () => {
  for (const id of [
    'CohereLabs/c4ai-command-r7b-12-2024',
    'CohereForAI/c4ai-command-r7b-12-2024',
    'cohere/command-r7b-12-2024',
    'CohereLabs/c4ai-command-a-03-2025',
    'cohere/command-a',
    'CohereLabs/command-a-reasoning-08-2025',
    'CohereLabs/command-a-vision-07-2025',
    'RedHatAI/command-a-plus-05-2026-fp8',
    'openrouter/cohere/command-a:free',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'cohere-command', id);
  }
  for (const id of ['cohere/command-r-08-2024', 'cohere/command-r-plus-08-2024', 'CohereForAI/aya-expanse-32b', 'cohere/command-light']) {
    assert.notEqual(detectFamily(id)?.format.id, 'cohere-command', id);
  }
  assert.equal(detectFamily(undefined, VLLM_SINGLE)?.format.id, 'cohere-command');
  assert.equal(detectFamily(undefined, SGLANG_TRUNCATED)?.format.id, 'cohere-command');
  const a = analyze({ nativeText: SGLANG_TRUNCATED, model: 'cohere/command-a' });
  assert.equal(a.family, 'cohere-command');
  assert.ok(a.findings.some((x) => x.severity === 'error'));
});

test("cohere-command: the render writes the template's list and <|END_OF_TURN_TOKEN|>, and reads back", () => {
  const m = { reasoning: 'Plan.', toolCalls: [{ index: 0, name: 'foo', arguments: '{"query": "query1"}' }] };
  const r = f.render(m);
  assert.match(
    r.text,
    /^<\|START_THINKING\|>Plan\.<\|END_THINKING\|><\|START_ACTION\|>\[\n {4}\{"tool_call_id": "0", "tool_name": "foo", "parameters": \{"query": "query1"\}\}\n\]<\|END_ACTION\|><\|END_OF_TURN_TOKEN\|>$/,
  );
  assert.deepEqual(parse(r.text).message, m);
  const fam = getFamily('cohere-command');
  assert.equal(fam.repair.arguments, 'json');
  assert.ok(fam.repair.stripped.includes('<|START_RESPONSE|>'));
});

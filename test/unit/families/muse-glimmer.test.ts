import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { ENGINE_PARSERS } from '../../../src/core/families/engine-parsers';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('muse-glimmer');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'meta-models/Muse-Glimmer-30B';
const errors = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// sgl-project/sglang test/registered/unit/function_call/test_muse_glimmer_detector.py @ 0bbef96b3bab0ddf7df43b441aba3e8b7f4b9ecd
// (`atem()` builds the block; the chat template advertises a bare tool NAME as NAME.*, so the model writes NAME.NAME).
const DOUBLED = 'get_weather.get_weather';
const atem = (name: string, params: Record<string, string>) =>
  `<atem:function_calls>\n<atem:invoke name="${name}">\n${Object.entries(params)
    .map(([k, v]) => `<atem:parameter name="${k}">${v}</atem:parameter>\n`)
    .join('')}</atem:invoke>\n</atem:function_calls>`;
const SINGLE = ` to=self<|message|>Need weather.<|eom|><|start|>assistant to=${DOUBLED}<|message|>${atem(DOUBLED, { city: 'Paris' })}`;
const PARALLEL = ` to=self<|message|>Two cities.<|eom|><|start|>assistant to=${DOUBLED}<|message|>${atem(DOUBLED, { city: 'Paris' })}<|eom|><|start|>assistant to=${DOUBLED}<|message|>${atem(DOUBLED, { city: 'Tokyo' })}`;
const THEN_ANSWER = ` to=self<|message|>r<|eom|><|start|>assistant to=${DOUBLED}<|message|>${atem(DOUBLED, { city: 'Paris' })}<|eom|><|start|>assistant to=user<|message|>It is sunny.`;
const PREAMBLE = ` to=self<|message|>r<|eom|><|start|>assistant to=user<|message|>Let me check.<|eom|><|start|>assistant to=${DOUBLED}<|message|>${atem(DOUBLED, { city: 'Paris' })}`;
const TYPED = `<|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n<atem:parameter name="s">hello world</atem:parameter>\n<atem:parameter name="i">42</atem:parameter>\n<atem:parameter name="b">true</atem:parameter>\n<atem:parameter name="n">null</atem:parameter>\n<atem:parameter name="o">{"a": 1}</atem:parameter>\n<atem:parameter name="l">[1, 2]</atem:parameter>\n</atem:invoke>\n</atem:function_calls>`;
const QUOTED_IN_REASONING = ` to=self<|message|>Maybe I call ${atem(DOUBLED, { city: 'X' })} — no.<|eom|><|start|>assistant to=user<|message|>I will not call it.`;
const TRUNCATED = ` to=self<|message|>Need weather.<|eom|><|start|>assistant to=${DOUBLED}<|message|><atem:function_calls>\n<atem:invoke name="${DOUBLED}">\n<atem:parameter name="city">Par`;
const UNFRAMED = atem(DOUBLED, { city: 'Paris' });
// ollama/ollama model/parsers/glimmer_test.go @ fb30760996871fa9460115c753afd2c60d4ab0f7
// (TestGlimmerParserMultipleMessagesAndIndices, TestGlimmerParserATEMValueMayContainControlTokenText).
const OLLAMA_TWO = ` to=self<|message|>Think<|eom|><|start|>assistant to=first<|message|>${atem('first', { x: '1' })}<|eom|><|start|>assistant to=second<|message|>${atem('second', {})}<|eot|>`;
const CONTROL_TEXT = 'literal <|eot|> and <|start|>assistant to=user<|message|> text';
const OLLAMA_CONTROL = ` to=echo<|message|>${atem('echo', { text: CONTROL_TEXT })}<|eot|>`;

test("muse-glimmer: the engines' healthy outputs parse to their calls, reasoning and content", () => {
  const single = parse(SINGLE);
  assert.deepEqual(single.problems, []);
  assert.equal(single.message.reasoning, 'Need weather.');
  assert.equal(single.message.content, undefined);
  // NAME.NAME is the bare tool, as vLLM and SGLang resolve it.
  assert.deepEqual(calls(single), [['get_weather', { city: 'Paris' }]]);
  assert.deepEqual(slices(single, 'call-name', 0), ['get_weather']);

  const parallel = parse(PARALLEL);
  assert.deepEqual(parallel.problems, []);
  assert.deepEqual(calls(parallel), [
    ['get_weather', { city: 'Paris' }],
    ['get_weather', { city: 'Tokyo' }],
  ]);

  const answer = parse(THEN_ANSWER);
  assert.deepEqual(answer.problems, []);
  assert.equal(answer.message.content, 'It is sunny.');
  assert.deepEqual(calls(answer), [['get_weather', { city: 'Paris' }]]);

  const preamble = parse(PREAMBLE);
  assert.deepEqual(preamble.problems, []);
  assert.equal(preamble.message.content, 'Let me check.');
  assert.deepEqual(calls(preamble), [['get_weather', { city: 'Paris' }]]);

  const typed = parse(TYPED);
  assert.deepEqual(typed.problems, []);
  assert.deepEqual(calls(typed), [['get_weather', { s: 'hello world', i: 42, b: true, n: null, o: { a: 1 }, l: [1, 2] }]]);

  const two = parse(OLLAMA_TWO);
  assert.deepEqual(two.problems, []);
  assert.equal(two.message.reasoning, 'Think');
  assert.deepEqual(calls(two), [
    ['first', { x: 1 }],
    ['second', {}],
  ]);
  assert.deepEqual(slices(two, 'end'), ['<|eot|>']);

  // A value may hold control-token text: the invoke runs to its own close.
  const control = parse(OLLAMA_CONTROL);
  assert.deepEqual(control.problems, []);
  assert.deepEqual(calls(control), [['echo', { text: CONTROL_TEXT }]]);
});

test('muse-glimmer: ATEM inside reasoning or an answer is text, not a call', () => {
  const p = parse(QUOTED_IN_REASONING);
  assert.deepEqual(p.message.toolCalls, []);
  assert.deepEqual(p.problems, []);
  assert.match(p.message.reasoning ?? '', /<atem:invoke name="get_weather.get_weather">/);
  assert.equal(p.message.content, 'I will not call it.');
  // Plain prose, and prose that opens like a header, stay content and are not flagged.
  for (const prose of ['to=x is the syntax.', 'to= is an assignment', 'Hello there.']) {
    const q = parse(prose);
    assert.deepEqual(q.problems, [], prose);
    assert.equal(q.message.content, prose);
  }
});

test('muse-glimmer: vLLM tests/parser/engine/test_muse_glimmer.py — channels, and a tool header written without <|eom|><|start|>', () => {
  // vllm-project/vllm tests/parser/engine/test_muse_glimmer.py @ 8f1dea0a0562f91e6df4858e25eb0f23f11f8e4b
  const answer = parse(' to=self<|message|>Think about it.<|eom|><|start|>assistant to=user<|message|>The answer is 42.<|eot|>');
  assert.deepEqual([answer.message.reasoning, answer.message.content, answer.problems], ['Think about it.', 'The answer is 42.', []]);
  // test_bare_header_is_untagged_content, test_unframed_output_passes_through, test_content_only
  for (const [text, content] of [
    [' <|message|>public text<|eot|>', 'public text'],
    ['Just a direct answer.', 'Just a direct answer.'],
    [' to=user<|message|>Just a direct answer.<|eot|>', 'Just a direct answer.'],
  ]) {
    const p = parse(text);
    assert.deepEqual([p.message.content, p.message.reasoning, p.problems], [content, undefined, []], text);
  }
  // test_prose_to_in_reasoning_is_not_a_channel_switch
  const prose = parse(' to=self<|message|>set flag to=5 and send it to=alice<|eom|><|start|>assistant to=user<|message|>done<|eot|>');
  assert.deepEqual([prose.message.reasoning, prose.message.content, prose.problems], ['set flag to=5 and send it to=alice', 'done', []]);
  // test_truncated_cot_keeps_echoed_atem_as_reasoning: ATEM quoted in reasoning cut off is reasoning, never a call.
  const quoted = parse(
    ' to=self<|message|>Maybe I should call <atem:function_calls>\n<atem:invoke name="read.read">\n<atem:parameter name="path">/etc/hostname</atem:parameter>\n</atem:invoke>\n</atem:function_calls> but wait',
  );
  assert.deepEqual([quoted.message.toolCalls, codes(quoted)], [[], ['reasoning-unclosed']]);
  // test_bare_tool_header_without_eom_routes_tool_call: "known model defect"; vLLM ends the reasoning at the header
  // and the call survives (SGLang's reasoning channel swallows it): read, and the missing <|eom|><|start|> flagged.
  const bare = parse(
    ' to=self<|message|>calling now to=weather.get<|message|><atem:function_calls>\n<atem:invoke name="weather.get">\n<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls>',
  );
  assert.equal(bare.message.reasoning, 'calling now');
  assert.deepEqual(calls(bare), [['weather.get', { city: 'Paris' }]]);
  assert.deepEqual(codes(bare), ['malformed-call']);
  assert.ok(errors(bare.text).length > 0);
});

test('muse-glimmer: broken outputs are flagged', () => {
  // Cut inside a value (SGLang test_truncated_tool_channel_drops_partial_invoke): the call is kept with what arrived.
  const cut = parse(TRUNCATED);
  assert.ok(codes(cut).includes('call-unclosed'), JSON.stringify(cut.problems));
  assert.equal(cut.message.toolCalls[0].name, 'get_weather');
  // Only </atem:function_calls> missing after a complete invoke.
  const section = parse(SINGLE.replace(/\n<\/atem:function_calls>$/, ''));
  assert.deepEqual(codes(section), ['section-unclosed']);
  assert.deepEqual(calls(section), [['get_weather', { city: 'Paris' }]]);
  // The reasoning message never ended, a message header cut off.
  assert.deepEqual(codes(parse(' to=self<|message|>Thinking about')), ['reasoning-unclosed']);
  assert.ok(codes(parse(' to=self<|message|>r<|eom|><|start|>assistant to=get_wea')).includes('call-unclosed'));
  // An ATEM block without its to=NAME<|message|> header (SGLang reads it as content, vLLM as a call).
  const unframed = parse(UNFRAMED);
  assert.deepEqual(codes(unframed), ['malformed-call']);
  assert.match(unframed.problems[0].message, /without its opening to=NAME/);
  // The header names one tool, the invoke another.
  assert.deepEqual(codes(parse(`<|start|>assistant to=read<|message|>${atem('write', { path: 'a' })}`)), ['malformed-call']);
  // JSON written into the tool channel instead of ATEM.
  assert.deepEqual(codes(parse('<|start|>assistant to=get_weather<|message|>{"city": "Paris"}<|eom|>')), ['malformed-call']);
});

test('muse-glimmer: model ids and markers pick the family; Harmony keeps its own', () => {
  for (const id of [
    'meta-models/Muse-Glimmer-30B',
    'unsloth/Muse-Glimmer-30B-GGUF',
    'mlx-community/Muse-Glimmer-30B-4bit',
    'meta/muse-glimmer',
    'muse-glimmer-30b',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'muse-glimmer', id);
  }
  assert.notEqual(detectFamily('meta/muse-spark-1.2')?.format.id, 'muse-glimmer');
  assert.equal(detectFamily(undefined, SINGLE)?.format.id, 'muse-glimmer');
  assert.equal(detectFamily(undefined, THEN_ANSWER)?.format.id, 'muse-glimmer');
  assert.equal(
    detectFamily(undefined, '<|channel|>commentary to=functions.read <|constrain|>json<|message|>{"path":"a"}')?.format.id,
    'gpt-oss',
  );
  assert.equal(f.detectText('Send it to=me <message> please.'), 0);
});

test('muse-glimmer: every engine parser of the dialect maps to the family', () => {
  const names = ENGINE_PARSERS.filter((p) => p.family === 'muse-glimmer').map((p) => `${p.engine} ${p.name}`);
  assert.deepEqual(names.sort(), ['llama.cpp muse_glimmer', 'ollama glimmer', 'sglang muse', 'vllm muse_glimmer']);
});

test('muse-glimmer: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: PARALLEL, model: MODEL });
  assert.equal(healthy.family, 'muse-glimmer');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => c.name),
    ['get_weather', 'get_weather'],
  );
  assert.ok(errors(TRUNCATED).some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors(' to=user<|message|>Hello there.<|eot|>'), []);
});

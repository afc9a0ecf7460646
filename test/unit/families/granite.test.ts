import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';
import { assertProblems, assertSegments, codes } from './helpers';

function parse(id: FamilyId, text: string) {
  const p = getFormat(id).parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const errors = (text: string, model: string) => analyze({ nativeText: text, model }).findings.filter((x) => x.severity === 'error');

// vllm-project/vllm tests/tool_parsers/test_granite_tool_parser.py @ 2ab4733ef9fc3c039a5868e0141fee3b7fd95890
const G3_SINGLE = '<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]';
const G3_PARALLEL = `<|tool_call|> [
  {"name": "get_weather", "arguments": {"city": "Tokyo"}},
  {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}
]`;
const G3_STRING = '<tool_call> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]';
const G3_NAME_LAST =
  '<|tool_call|> [{"arguments": {"city": "Tokyo"}, "name": "get_weather"}, {"arguments": {"timezone": "Asia/Tokyo"}, "name": "get_time"}]';
const G3_MALFORMED = ['<|tool_call|> [{"name": "func", "arguments": {', '<|tool_call|> {"name": "func", "arguments": {}}'];

test('granite3: the vLLM fixtures (token and string openers, parallel calls, name after arguments) parse to their calls', () => {
  for (const text of [G3_SINGLE, G3_STRING]) {
    const p = parse('granite3', text);
    assert.deepEqual(p.problems, [], text);
    assert.deepEqual(calls(p), [['get_weather', { city: 'Tokyo' }]]);
  }
  for (const text of [G3_PARALLEL, G3_NAME_LAST]) {
    const p = parse('granite3', text);
    assert.deepEqual(p.problems, [], text);
    assert.deepEqual(calls(p), [
      ['get_weather', { city: 'Tokyo' }],
      ['get_time', { timezone: 'Asia/Tokyo' }],
    ]);
  }
  assert.deepEqual(calls(parse('granite3', '<|tool_call|> [{"name": "refresh", "arguments": {}}]')), [['refresh', {}]]);
  // Granite 3.2 / 3.3 with thinking: <think> and the <response> wrapper.
  const thinking = parse('granite3', '<think>Simple.</think><response>It is 4.</response><|end_of_text|>');
  assert.deepEqual(thinking.problems, []);
  assert.deepEqual(thinking.message, { reasoning: 'Simple.', content: 'It is 4.', toolCalls: [] });
});

test('granite3: a list cut or not a list is flagged; prose is not', () => {
  assert.deepEqual(codes(parse('granite3', G3_MALFORMED[0])), ['section-unclosed', 'call-unclosed']);
  assert.deepEqual(codes(parse('granite3', G3_MALFORMED[1])), ['malformed-call']);
  assert.deepEqual(codes(parse('granite3', G3_SINGLE.slice(0, -1))), ['section-unclosed']);
  for (const text of G3_MALFORMED) assert.ok(errors(text, 'ibm-granite/granite-3.3-8b-instruct').length > 0, text);
  assert.deepEqual(errors(G3_PARALLEL, 'ibm-granite/granite-3.1-8b-instruct'), []);
  const prose = 'This is a regular response without any tool calls.';
  assert.deepEqual(parse('granite3', prose).problems, []);
  assert.deepEqual(errors(prose, 'ibm-granite/granite-3.3-8b-instruct'), []);
});

// vllm-project/vllm tests/tool_parsers/test_granite4_tool_parser.py @ 34f830e95846db95409c0cd6d8a168066ebd8df9
const COORDS = {
  coordinates: [
    [23.54, 43.1],
    [-12.2, 54.3],
    [4, 5],
  ],
  coordinate_type: 'latlong',
};
const STOCK = { symbol: 'AAPL', start_date: '2021-01-01', end_date: '2021-12-31' };
const tc = (call: unknown) => `<tool_call> ${JSON.stringify(call)} </tool_call>`;
const G4_COMPLEX =
  'Here goes the bbox call: \n' +
  tc({ name: 'find_bbox', arguments: JSON.stringify(COORDS) }) +
  ' Now the stock price call: \n ' +
  tc({ name: 'get_stock_price', arguments: STOCK }) +
  ' Now another bbox call: \n ' +
  tc({ name: 'find_bbox', arguments: JSON.stringify(COORDS) }) +
  " See? I'm a helpful assistant.";

test('granite4: the vLLM fixture (content between calls, arguments as a JSON string) parses to its calls', () => {
  const p = parse('granite4', G4_COMPLEX);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p), [
    ['find_bbox', COORDS],
    ['get_stock_price', STOCK],
    ['find_bbox', COORDS],
  ]);
  assert.match(p.message.content ?? '', /^Here goes the bbox call:[^]*See\? I'm a helpful assistant\.$/);
  const two = parse(
    'granite4',
    '<tool_call> {"name": "find_bbox", "arguments": {}} </tool_call>some explanation <tool_call> {"name": "get_stock_price", "arguments": {}} </tool_call>',
  );
  assert.deepEqual(two.problems, []);
  assert.deepEqual(calls(two), [
    ['find_bbox', {}],
    ['get_stock_price', {}],
  ]);
  assert.equal(two.message.content, 'some explanation');
});

test('granite4: a call cut in its JSON, a missing </tool_call> and an orphan closer are flagged; prose is not', () => {
  const whole = `Checking.\n${tc({ name: 'get_stock_price', arguments: STOCK })}<|end_of_text|>`;
  assert.deepEqual(parse('granite4', whole).problems, []);
  const cut = whole.slice(0, whole.indexOf('2021-12') + 4);
  assert.deepEqual(codes(parse('granite4', cut)), ['call-unclosed']);
  assert.deepEqual(codes(parse('granite4', whole.replace(' </tool_call>', ''))), ['call-unclosed']);
  assert.deepEqual(codes(parse('granite4', '{"name": "a", "arguments": {}}</tool_call>')), ['stray-marker']);
  for (let i = 0; i <= whole.length; i++) parse('granite4', whole.slice(0, i));
  assert.ok(errors(cut, 'ibm-granite/granite-4.0-h-small').length > 0);
  assert.deepEqual(errors(whole, 'ibm-granite/granite-4.0-h-small'), []);
  assert.deepEqual(errors('A plain answer.<|end_of_text|>', 'ibm-granite/granite-4.0-micro'), []);
});

test('granite42: the Qwen3-Coder XML with <think>, under its own id', () => {
  const text =
    '<think>\nNeed the weather.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nTokyo\n</parameter>\n</function>\n</tool_call>';
  const p = parse('granite42', text);
  assert.equal(p.family, 'granite42');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p), [['get_weather', { city: 'Tokyo' }]]);
  assert.ok(errors(text.slice(0, text.indexOf('Tokyo') + 3), 'ibm-granite/granite-4.2-8b').length > 0);
  assert.equal(getFamily('granite42').verdicts.engines.vllm.parser, 'qwen3_coder');
});

test('granite: model ids pick the dialect by version; markers tell Granite 3 and 4 apart from Hermes / Qwen3', () => {
  const cases: [string, FamilyId][] = [
    ['ibm-granite/granite-3.0-8b-instruct', 'granite3'],
    ['ibm-granite/granite-3.1-8b-instruct', 'granite3'],
    ['ibm-granite/granite-3.3-8b-instruct', 'granite3'],
    ['ibm-granite/granite-4.0-h-small', 'granite4'],
    ['ibm-granite/granite-4.0-h-tiny', 'granite4'],
    ['ibm/granite-4-h-small', 'granite4'],
    ['ibm-granite/granite-4.1-8b', 'granite4'],
    ['openrouter/ibm-granite/granite-4.0-h-micro', 'granite4'],
    ['granite4:tiny-h', 'granite4'],
    ['ibm-granite/granite-4.2-8b', 'granite42'],
    ['ibm-granite/granite-4.2-30b', 'granite42'],
  ];
  for (const [id, family] of cases) assert.equal(detectFamily(id)?.format.id, family, id);
  for (const id of ['ibm-granite/granite-guardian-3.2-5b', 'ibm-granite/granite-20b-functioncalling'])
    assert.ok(!/^granite[34]/.test(detectFamily(id)?.format.id ?? ''), id);
  assert.equal(detectFamily(undefined, G3_SINGLE)?.format.id, 'granite3');
  assert.equal(detectFamily(undefined, G3_STRING)?.format.id, 'granite3');
  assert.equal(detectFamily(undefined, `${tc({ name: 'a', arguments: {} })}<|end_of_text|>`)?.format.id, 'granite4');
  // Without a Granite token the same block is Qwen3's.
  assert.equal(detectFamily(undefined, tc({ name: 'a', arguments: {} }))?.format.id, 'qwen3');
});

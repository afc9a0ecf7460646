import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
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

// vllm-project/vllm tests/tool_parsers/test_gigachat3_tool_parser.py @ 102ebe1158710d3d09835e7887904042ed770264
const MSG_SEP = '<|message_sep|>\n\n';
const G3 = `${MSG_SEP}function call<|role_sep|>\n`;
const G31 = '<|function_call|>';
const SIMPLE = JSON.stringify({ name: 'manage_user_memory', arguments: { action: 'create', id: 'preferences' } });
const COMPLEX_ARGS = {
  action: 'create',
  id: 'preferences',
  content: { short_answers: true, hate_emojis: true, english_ui: false, russian_math_explanations: true },
};
const COMPLEX = JSON.stringify({ name: 'manage_user_memory', arguments: COMPLEX_ARGS });
const CONTENT = "I'll check that for you.";

test('gigachat3: the vLLM fixtures (GigaChat 3 and 3.1 headers, content, </s>) parse to their call', () => {
  for (const head of [G3, G31]) {
    const simple = parse('gigachat3', `${head}${SIMPLE}`);
    assert.deepEqual(simple.problems, []);
    assert.deepEqual(calls(simple), [['manage_user_memory', { action: 'create', id: 'preferences' }]]);
    assert.equal(simple.message.content, undefined);

    const empty = parse('gigachat3', `${head}${JSON.stringify({ name: 'manage_user_memory', arguments: {} })}`);
    assert.deepEqual(calls(empty), [['manage_user_memory', {}]]);

    const complex = parse('gigachat3', `${head}${COMPLEX}`);
    assert.deepEqual(calls(complex), [['manage_user_memory', COMPLEX_ARGS]]);

    for (const text of [`${CONTENT}${head}${SIMPLE}`, `${CONTENT}${head}${SIMPLE}</s>`]) {
      const mixed = parse('gigachat3', text);
      assert.deepEqual(mixed.problems, [], text);
      assert.equal(mixed.message.content, CONTENT);
      assert.deepEqual(calls(mixed), [['manage_user_memory', { action: 'create', id: 'preferences' }]]);
    }
  }
  const plain = parse('gigachat3', 'How can I help you today?');
  assert.deepEqual(plain.problems, []);
  assert.deepEqual(plain.message, { content: 'How can I help you today?', toolCalls: [] });
});

test('gigachat3: a call cut in its object or its header, and junk after the header, are flagged', () => {
  const cut = parse('gigachat3', `${CONTENT}${G3}${COMPLEX.slice(0, 60)}`);
  assert.deepEqual(codes(cut), ['call-unclosed']);
  assert.equal(cut.message.toolCalls[0].name, 'manage_user_memory');
  // The outer } missing: the arguments are whole, the call is not.
  const noBrace = parse('gigachat3', `${G3}${SIMPLE.slice(0, -1)}`);
  assert.deepEqual(codes(noBrace), ['call-unclosed']);
  assert.deepEqual(JSON.parse(noBrace.message.toolCalls[0].arguments), { action: 'create', id: 'preferences' });
  // A reply ends with </s>; the separator means a call message was on its way.
  const header = parse('gigachat3', `${CONTENT}${MSG_SEP}function ca`);
  assert.deepEqual(codes(header), ['marker-truncated']);
  assert.equal(header.message.content, CONTENT);
  const junk = parse('gigachat3', `${G3}not json</s>`);
  assert.deepEqual(codes(junk), ['malformed-call']);

  assert.ok(errors(`${CONTENT}${G3}${COMPLEX.slice(0, 60)}`, 'ai-sage/GigaChat3-10B-A1.8B').length > 0);
  assert.deepEqual(errors(`${CONTENT}${G3}${SIMPLE}</s>`, 'ai-sage/GigaChat3-10B-A1.8B'), []);
  assert.deepEqual(errors('How can I help you today?', 'ai-sage/GigaChat3.1-10B-A1.8B'), []);
});

// vllm-project/vllm tests/tool_parsers/test_gigachat35_tool_parser.py @ 053521db5e1807004c5e89d03c75b93b3974c7c7
const invoke = (name: string, ...params: [string, string, boolean][]) =>
  `<｜GCML｜invoke name="${name}">${params.map(([k, val, s]) => `<｜GCML｜parameter name="${k}" string="${s}">${val}</｜GCML｜parameter>`).join('')}</｜GCML｜invoke>`;
const block = (...invokes: string[]) => `<｜GCML｜tool_calls>${invokes.join('')}</｜GCML｜tool_calls>`;

test('gigachat35: the vLLM fixtures (typed values, parallel calls, surrounding text, no arguments) parse to their calls', () => {
  const single = parse('gigachat35', block(invoke('get_weather', ['city', 'Tokyo', true])));
  assert.deepEqual(single.problems, []);
  assert.deepEqual(calls(single), [['get_weather', { city: 'Tokyo' }]]);

  const parallel = parse(
    'gigachat35',
    block(invoke('get_weather', ['city', 'Tokyo', true]), invoke('get_time', ['timezone', 'Asia/Tokyo', true])),
  );
  assert.deepEqual(calls(parallel), [
    ['get_weather', { city: 'Tokyo' }],
    ['get_time', { timezone: 'Asia/Tokyo' }],
  ]);

  const typed = parse(
    'gigachat35',
    block(
      invoke(
        'typed_args',
        ['string_field', '"hello"', false],
        ['int_field', '7', false],
        ['float_field', '3.5', false],
        ['bool_field', 'true', false],
        ['null_field', 'null', false],
        ['array_field', '[1, 2, 3]', false],
        ['object_field', '{"nested": true}', false],
      ),
    ),
  );
  assert.deepEqual(typed.problems, []);
  assert.deepEqual(calls(typed), [
    [
      'typed_args',
      {
        string_field: 'hello',
        int_field: 7,
        float_field: 3.5,
        bool_field: true,
        null_field: null,
        array_field: [1, 2, 3],
        object_field: { nested: true },
      },
    ],
  ]);

  const surrounded = parse('gigachat35', `I will check.${block(invoke('get_weather', ['city', 'Tokyo', true]))}`);
  assert.equal(surrounded.message.content, 'I will check.');
  assert.deepEqual(calls(parse('gigachat35', block(invoke('empty_args')))), [['empty_args', {}]]);
  assert.deepEqual(calls(parse('gigachat35', block(invoke('escaped', ['text', 'line 1\\n"quoted"', true])))), [
    ['escaped', { text: 'line 1\\n"quoted"' }],
  ]);
  // A string="false" object is JSON (test_string_false_json_object).
  assert.deepEqual(calls(parse('gigachat35', block(invoke('store', ['payload', '{"a": 1}', false])))), [['store', { payload: { a: 1 } }]]);
});

test('gigachat35: the vLLM malformed inputs and cut outputs are flagged', () => {
  for (const text of [
    '<｜GCML｜tool_calls><｜GCML｜invoke name="broken">',
    '<｜GCML｜tool_calls><｜GCML｜parameter name="x">1</｜GCML｜parameter>',
  ]) {
    const p = parse('gigachat35', text);
    assert.ok(p.problems.length > 0, text);
  }
  const whole = `Checking.\n\n${block(invoke('get_weather', ['city', 'Tokyo', true]), invoke('get_time', ['timezone', 'Asia/Tokyo', true]))}</s>`;
  assert.deepEqual(parse('gigachat35', whole).problems, []);
  const cut = whole.slice(0, whole.indexOf('Asia/') + 3);
  const p = parse('gigachat35', cut);
  assert.ok(codes(p).includes('call-unclosed'), codes(p).join());
  assert.deepEqual(
    p.message.toolCalls.map((c) => c.name),
    ['get_weather', 'get_time'],
  );
  for (let i = 0; i <= whole.length; i++) parse('gigachat35', whole.slice(0, i));

  assert.ok(errors(cut, 'ai-sage/GigaChat3.5-432B-A28B').length > 0);
  assert.deepEqual(errors(whole, 'ai-sage/GigaChat3.5-432B-A28B'), []);
  assert.deepEqual(errors('Plain answer without a tool call.', 'ai-sage/GigaChat3.5-432B-A28B'), []);
});

test('gigachat: model ids pick the dialect by version, and the markers tell it without one', () => {
  const cases: [string, FamilyId][] = [
    ['ai-sage/GigaChat3-10B-A1.8B', 'gigachat3'],
    ['ai-sage/GigaChat3-10B-A1.8B-bf16', 'gigachat3'],
    ['ai-sage/GigaChat3-702B-A36B-preview', 'gigachat3'],
    ['ai-sage/GigaChat3.1-10B-A1.8B', 'gigachat3'],
    ['ai-sage/GigaChat3.5-432B-A28B', 'gigachat35'],
    ['cloudru/ai-sage/GigaChat3.5-432B-A28B', 'gigachat35'],
    ['gigachat-3.5-ultra', 'gigachat35'],
  ];
  for (const [id, family] of cases) assert.equal(detectFamily(id)?.format.id, family, id);
  for (const id of ['GigaChat-2-Max', 'sber/gigachat-pro']) assert.equal(detectFamily(id), undefined, id);
  assert.equal(detectFamily(undefined, `${CONTENT}${G3}${SIMPLE}`)?.format.id, 'gigachat3');
  assert.equal(detectFamily(undefined, `${G31}${SIMPLE}`)?.format.id, 'gigachat3');
  assert.equal(detectFamily(undefined, block(invoke('get_weather', ['city', 'Tokyo', true])))?.format.id, 'gigachat35');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('reka');

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const calls = (p: ReturnType<typeof parse>) => p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
const MODEL = 'RekaAI/reka-flash-3.1';
const findings = (text: string, model = MODEL) => analyze({ nativeText: text, model }).findings;
const errors = (text: string, model = MODEL) => findings(text, model).filter((x) => x.severity === 'error');

// ggml-org/llama.cpp tests/test-chat.cpp @ 0042e2079d3428ba7af410df553202aa7fdf8d7a ("Reka Edge", Reka-Edge.jinja)
const CALL = '<tool_call>\n{"name": "special_function", "arguments": {"arg1": 1}}\n</tool_call>';
const CALL_OPT = '<tool_call>\n{"name": "special_function_with_opt", "arguments": {"arg1": 1, "arg2": 2}}\n</tool_call>';
const EDGE_THOUGHTS = "I'm\nthinking\n</think>\n\nHello, world!\nWhat's up?";
const EDGE_CALL_THOUGHTS = `I'm\nthinking\n</think>\n\n${CALL}`;
const EDGE_CONTENT_CALL = `Hello, world!\nWhat's up?\n${CALL}`;
const EDGE_CUTOFF = '<tool_call>\n{"name": "special_function", "arguments": {"arg';

test("reka: llama.cpp's Reka Edge outputs parse to their calls", () => {
  const one = parse(CALL);
  assert.deepEqual(one.problems, []);
  assert.deepEqual(calls(one), [['special_function', { arg1: 1 }]]);
  const thoughts = parse(EDGE_THOUGHTS);
  assert.deepEqual(thoughts.problems, []);
  assert.equal(thoughts.message.reasoning, "I'm\nthinking");
  assert.equal(thoughts.message.content, "Hello, world!\nWhat's up?");
  const callThoughts = parse(EDGE_CALL_THOUGHTS);
  assert.deepEqual(callThoughts.problems, []);
  assert.equal(callThoughts.message.reasoning, "I'm\nthinking");
  assert.deepEqual(calls(callThoughts), [['special_function', { arg1: 1 }]]);
  const contentCall = parse(EDGE_CONTENT_CALL);
  assert.equal(contentCall.message.content, "Hello, world!\nWhat's up?");
  assert.deepEqual(calls(contentCall), [['special_function', { arg1: 1 }]]);
  const two = parse(`${CALL}\n${CALL_OPT}`);
  assert.deepEqual(two.problems, []);
  assert.deepEqual(calls(two), [
    ['special_function', { arg1: 1 }],
    ['special_function_with_opt', { arg1: 1, arg2: 2 }],
  ]);
  // Reka Flash reasons in <reasoning>, and a turn ends with <sep>.
  const flash = parse(`<reasoning>\nWeather first.\n</reasoning>\n\n${CALL}<sep>`);
  assert.deepEqual(flash.problems, []);
  assert.equal(flash.message.reasoning, 'Weather first.');
  assert.deepEqual(calls(flash), [['special_function', { arg1: 1 }]]);
});

test('reka: a call quoted in the reasoning before the real one is reasoning, not a call, and no error', () => {
  const text = `<reasoning>I will use the tool like this: ${CALL} and then answer.</reasoning>\n\n${CALL}<sep>`;
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p), [['special_function', { arg1: 1 }]]);
  assert.ok(p.message.reasoning?.includes('<tool_call>'));
  assert.deepEqual(
    findings(text).filter((x) => x.severity !== 'info'),
    [],
  );
  // The same with Reka Edge's tags.
  const edge = `<think>\nFormat: ${CALL}\n</think>\n\n${CALL}`;
  assert.deepEqual(calls(parse(edge)), [['special_function', { arg1: 1 }]]);
  assert.deepEqual(
    findings(edge, 'rekaai/reka-edge').filter((x) => x.severity !== 'info'),
    [],
  );
});

test('reka: broken outputs are flagged', () => {
  const cutoff = parse(EDGE_CUTOFF);
  assert.deepEqual(codes(cutoff), ['call-unclosed']);
  assert.equal(cutoff.message.toolCalls[0].name, 'special_function');
  assert.deepEqual(codes(parse(CALL.replace(/\n<\/tool_call>$/, ''))), ['call-unclosed']);
  assert.deepEqual(codes(parse(`${CALL.replace(/<\/tool_call>$/, '</tool_c')}`)).sort(), ['call-unclosed', 'marker-truncated']);
  assert.deepEqual(codes(parse('{"name": "f", "arguments": {}}\n</tool_call>')), ['stray-marker']);
  assert.deepEqual(codes(parse('<reasoning>Still thinking')), ['reasoning-unclosed']);
  assert.deepEqual(parse("Hello, world!\nWhat's up?").problems, []);
});

test('reka: model ids and markers pick the family; plain Hermes text stays Qwen3', () => {
  for (const id of [
    'RekaAI/reka-flash-3',
    'RekaAI/reka-flash-3.1',
    'rekaai/reka-flash-3:free',
    'rekaai/reka-edge',
    'RekaAI/reka-edge-2603',
    'RekaAI/reka-flash-3.1-rekaquant-q3_k_s',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'reka', id);
  }
  assert.notEqual(detectFamily('reka-core-20240501')?.format.id, 'reka');
  assert.equal(detectFamily(undefined, `<reasoning>Weather.</reasoning>\n${CALL}`)?.format.id, 'reka');
  assert.equal(detectFamily(undefined, `${CALL}<sep>`)?.format.id, 'reka');
  assert.equal(detectFamily(undefined, '<tool_call>\n{"name": "read", "arguments": {}}\n</tool_call>')?.format.id, 'qwen3');
});

test('reka: analyze by model id: a broken call is an error, a healthy one none', () => {
  const healthy = analyze({ nativeText: `<reasoning>\nWeather first.\n</reasoning>\n\n${CALL}<sep>`, model: MODEL });
  assert.equal(healthy.family, 'reka');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.ok(errors(EDGE_CUTOFF).some((x) => x.rule === 'call-unclosed'));
  assert.deepEqual(errors("Hello, world!\nWhat's up?"), []);
});

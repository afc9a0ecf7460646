// Seed-OSS: a call quoted as an example inside the reasoning before the real call, the budget notes inside the
// reasoning, and telling Seed-OSS from Qwen3-Coder by its own markers when no model id is given.
// Source: vLLM vllm-project/vllm tests/tool_parsers/test_seed_oss_tool_parser.py @ 0f120751344c09af442c1800020908d2b7ff71f2
// (test_extract_tool_calls: tool_call_0_thinking_budget, tool_call_512_thinkg_budget, tool_call_unlimited_thinking_budget;
// each yields exactly the one real call, the think text returned as content). vllm/tool_parsers/seed_oss_tool_parser.py
// looks for calls only after `</seed:think>`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments } from './helpers';

const f = getFormat('seed-oss');
const MODEL = 'ByteDance-Seed/Seed-OSS-36B-Instruct';

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

const CALL =
  '<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>';
// tool_call_unlimited_thinking_budget, verbatim.
const UNLIMITED =
  "<seed:think>\nGot it, let's see. The user asked for the weather in Barcelona, Spain. " +
  'First, I need to remember the function I can use: get_weather. The function requires a ' +
  'location (city and country) which is "Barcelona, Spain" here, and unit is optional. Since ' +
  "the user didn't specify the unit, the default in the function is Celsius, right? Wait, " +
  'let me check the function docstring again. Oh, the function says unit is optional, and ' +
  'returns temperature in Celsius. So I should call get_weather with location "Barcelona, ' +
  'Spain" and maybe omit unit or set to Celsius. Let me format the function call correctly. ' +
  'The format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, ' +
  'Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>. ' +
  'Wait, but does the unit parameter accept "celsius"? The docstring says unit is the unit ' +
  "of temperature, but the return is in Celsius anyway. Maybe even if I don't pass unit, " +
  'it\'s okay, but to be explicit, maybe pass "celsius". Let me go with that. So the function ' +
  'call should be as above. Then wait for the result to come back and tell the user the ' +
  `temperature in Celsius.</seed:think>${CALL}`;
// tool_call_512_thinkg_budget (shortened in the middle; its budget notes kept as the model wrote them).
const BUDGET_512 =
  "<seed:think>The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me analyze the question. \n" +
  '<seed:cot_budget_reflect>I have used 131 tokens, and there are 381 tokens remaining for use.</seed:cot_budget_reflect>\n' +
  " The unit parameter can be omitted since it's optional.</seed:think>\n" +
  '<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>';

test('seed-oss: a call quoted in the reasoning before the real call is not a call, and no error: the real call is the one', () => {
  const p = parse(UNLIMITED);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'get_weather', arguments: '{"location":"Barcelona, Spain","unit":"celsius"}' }]);
  assert.ok(p.message.reasoning?.includes('The format is <seed:tool_call>'));
  for (const model of [MODEL, undefined]) {
    const a = analyze({ nativeText: UNLIMITED, model });
    assert.equal(a.family, 'seed-oss');
    assert.deepEqual(
      a.findings.filter((x) => x.severity !== 'info'),
      [],
      JSON.stringify(a.findings),
    );
    assert.ok(
      a.findings.some((x) => x.rule === 'markup-in-reasoning' && x.severity === 'info'),
      JSON.stringify(a.findings),
    );
  }
});

test('seed-oss: a call written only inside the reasoning is still lost, an error', () => {
  const text = UNLIMITED.slice(0, UNLIMITED.indexOf('</seed:think>') + '</seed:think>'.length) + 'I will check now.';
  const a = analyze({ nativeText: text, model: MODEL });
  assert.deepEqual(a.message.toolCalls, []);
  assert.ok(
    a.findings.some((x) => x.rule === 'markup-in-reasoning' && x.severity === 'error'),
    JSON.stringify(a.findings),
  );
});

test('seed-oss: budget notes belong inside the reasoning', () => {
  const p = parse(BUDGET_512);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'get_weather', arguments: '{"location":"Barcelona, Spain"}' }]);
  const a = analyze({ nativeText: BUDGET_512, model: MODEL });
  assert.deepEqual(
    a.findings.filter((x) => x.severity !== 'info'),
    [],
    JSON.stringify(a.findings),
  );
});

test('seed-oss: told from Qwen3-Coder by its own markers when no model id is given, even with <function=', () => {
  // tool_call_0_thinking_budget's call, and the call alone.
  for (const text of [
    CALL,
    `<seed:think>\nThe current thinking budget is 0, so I will directly start answering the question.\n</seed:think>\n${CALL}`,
  ]) {
    assert.equal(detectFamily(undefined, text)?.format.id, 'seed-oss', text);
    const a = analyze({ nativeText: text });
    assert.equal(a.family, 'seed-oss');
    assert.deepEqual(
      a.findings.filter((x) => x.severity !== 'info'),
      [],
      JSON.stringify(a.findings),
    );
  }
  // Qwen3-Coder's own XML stays Qwen3-Coder.
  const qwen = '<tool_call>\n<function=get_weather>\n<parameter=location>\nBarcelona\n</parameter>\n</function>\n</tool_call>';
  assert.equal(detectFamily(undefined, qwen)?.format.id, 'qwen3-coder');
});

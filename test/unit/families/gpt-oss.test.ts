// gpt-oss (Harmony) calls left in content by a provider that decoded with `skip_special_tokens`: every Harmony marker is
// a special token, so `<|start|>assistant<|channel|>commentary to=functions.X <|constrain|>json<|message|>{…}<|call|>`
// reads `assistantcommentary to=functions.X json{…}`.
// Sources:
// - vLLM vllm-project/vllm tests/tool_parsers/test_openai_tool_parser.py @ 15c99cb111e626d885d7f54a0b57dc9ff10168db
//   (test_extract_tool_calls_single_tool: the analysis message and the `functions.get_current_weather` call; here as the
//   text that conversation decodes to once its special tokens are skipped).
// - The stripped shapes seen from providers: `assistantcommentary to=functions.fetch_url json{...}` (OpenRouter), the
//   name glued to `json` (`to=functions.spl_funcjson{"n":6}`), and a few markers left
//   (`assistantcommentary to=functions.x <|constrain|>json<|message|>{…}`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import markupInContent from '../../../src/core/checks/markup-in-content';
import { parseStrippedHarmony } from '../../../src/core/families/gpt-oss/grammar';
import { response, run } from '../checks/helpers';

const MODEL = 'openai/gpt-oss-120b';
const ANALYSIS = 'User asks: "What is the weather in Tokyo?" We need to use get_current_weather tool.';
const STRIPPED = `analysis${ANALYSIS}assistantcommentary to=functions.get_current_weather json{"location": "Tokyo"}`;

test('gpt-oss: a call with its special tokens stripped, in content, is leaked tool-call markup with the call recognised', () => {
  const a = analyze({ nativeText: STRIPPED, model: MODEL });
  assert.equal(a.family, 'gpt-oss');
  assert.deepEqual(a.message.toolCalls, []);
  const leak = a.findings.filter((f) => f.rule === 'markup-in-content');
  assert.equal(leak.length, 1, JSON.stringify(a.findings));
  assert.equal(leak[0].severity, 'error');
  assert.match(
    leak[0].message,
    /gpt-oss \(Harmony\) tool-call markup leaked into content \(assistantcommentary to=functions\.get_current_weather json\)/,
  );
  assert.match(leak[0].message, /1 call: get_current_weather/);
  assert.equal(
    STRIPPED.slice(leak[0].start, leak[0].end),
    'assistantcommentary to=functions.get_current_weather json{"location": "Tokyo"}',
  );
  assert.deepEqual(parseStrippedHarmony(STRIPPED).message.toolCalls, [
    { index: 0, name: 'get_current_weather', arguments: '{"location": "Tokyo"}' },
  ]);
});

test('gpt-oss: the other stripped shapes, raw and as a structured response', () => {
  const shapes: [string, string, string][] = [
    ['commentary to=functions.get_weather json{"location":"SF"}', 'get_weather', '{"location":"SF"}'],
    ['assistantcommentary to=functions.spl_funcjson{"n":6}', 'spl_func', '{"n":6}'],
    ['assistantcommentary to=functions.x <|constrain|>json<|message|>{"path":"a.md"}', 'x', '{"path":"a.md"}'],
  ];
  for (const [text, name, args] of shapes) {
    const a = analyze({ nativeText: text, model: MODEL });
    const leak = a.findings.filter((f) => f.rule === 'markup-in-content');
    assert.equal(leak.length, 1, `${text}: ${JSON.stringify(a.findings)}`);
    assert.equal(leak[0].severity, 'error', text);
    assert.match(leak[0].message, new RegExp(`1 call: ${name}\\.`), text);
    const r = run(markupInContent, { response: response({ model: MODEL, message: { content: text }, finishReason: 'stop' }) });
    assert.equal(r.findings.length, 1, text);
    assert.equal(r.findings[0].severity, 'error', text);
    assert.deepEqual(
      parseStrippedHarmony(text.replace(/<\|\w+\|>/g, '')).message.toolCalls.map((c) => [c.name, c.arguments]),
      [[name, args]],
    );
  }
});

test('gpt-oss: prose about recipients, and healthy Harmony, are not flagged', () => {
  for (const content of [
    'Send it to=functions later.',
    'The header is `to=functions.NAME`, then the JSON.',
    'analysisNothing to call.assistantfinalIt is sunny.',
  ]) {
    assert.deepEqual(
      run(markupInContent, { response: response({ model: MODEL, message: { content }, finishReason: 'stop' }) }).findings,
      [],
      content,
    );
  }
  const healthy = `<|channel|>analysis<|message|>${ANALYSIS}<|end|><|start|>assistant<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>`;
  const a = analyze({ nativeText: healthy, model: MODEL });
  assert.deepEqual(
    a.findings.filter((f) => f.severity !== 'info'),
    [],
  );
  assert.deepEqual(a.message.toolCalls, [{ index: 0, name: 'get_current_weather', arguments: '{"location": "Tokyo"}' }]);
});

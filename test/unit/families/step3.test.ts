import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('step3');
const param = (k: string, v: string) => `<steptml:parameter name="${k}">${v}</steptml:parameter>`;
const call = (name: string, body: string) =>
  `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="${name}">${body}</steptml:invoke><｜tool_call_end｜>`;
const section = (...calls: string[]) => `<｜tool_calls_begin｜>${calls.join('')}<｜tool_calls_end｜>`;

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

test('step3: a whole turn (reasoning from the generation prompt, content, calls, <|EOT|>) parses clean', () => {
  const text = `Find it.\n</think>\n\nLooking.${section(call('read', param('path', 'a.ts') + param('limit', '5')), call('ls', ''))}<|EOT|>`;
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'Find it.',
    content: 'Looking.',
    toolCalls: [
      { index: 0, name: 'read', arguments: '{"path":"a.ts","limit":5}' },
      { index: 1, name: 'ls', arguments: '{}' },
    ],
  });
  assert.equal(detectFamily('stepfun-ai/step3')?.format.id, 'step3');
  assert.equal(detectFamily('stepfun-ai/Step-3.5-Flash')?.format.id, 'qwen3-coder');
  assert.equal(detectFamily(undefined, text)?.format.id, 'step3');
});

test('step3: a value holding "<" is kept whole (SGLang test_step3_detector value_containing_lt)', () => {
  const p = parse(section(call('run_code', param('code', 'if a < b: print(a)') + param('lang', 'python'))));
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'run_code', arguments: '{"code":"if a < b: print(a)","lang":"python"}' }]);
});

test('step3: the render writes <|EOT|> at the end of a whole turn and not in a cut one', () => {
  const m = { content: 'It is sunny in Flor', toolCalls: [] };
  assert.ok(f.render(m).text.endsWith('<|EOT|>'));
  assert.ok(!f.render(m, { complete: false }).text.includes('<|EOT|>'));
});

test('step3: a turn cut inside a call or its section is flagged, and the call keeps what arrived', () => {
  const whole = `${section(call('write', param('path', 'a.md') + param('body', 'hello')))}<|EOT|>`;
  const cut = whole.slice(0, whole.indexOf('hello') + 3);
  const p = parse(cut);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'write', arguments: '{"path":"a.md","body":"hel"}' }]);
  assert.ok(codes(p).includes('call-unclosed'), codes(p).join());
  // The end of turn arriving inside the section: the section never closed.
  const early = parse(`${section(call('ls', param('dir', 'src'))).replace('<｜tool_calls_end｜>', '')}<|EOT|>`);
  assert.ok(codes(early).includes('section-unclosed'), codes(early).join());
  const a = analyze({ nativeText: cut, family: 'step3' });
  assert.ok(
    a.findings.some((x) => x.severity === 'error'),
    a.findings.map((x) => x.rule).join(),
  );
  for (let i = 0; i <= whole.length; i++) parse(whole.slice(0, i));
});

test('step3: residue after the calls and an orphan closer are flagged', () => {
  const residue = analyze({
    nativeText: `${section(call('ls', param('dir', 'src')))}<｜tool_call_begin｜>function<|EOT|>`,
    family: 'step3',
  });
  assert.ok(
    residue.findings.some((x) => x.severity === 'error'),
    residue.findings.map((x) => x.rule).join(),
  );
  const orphan = analyze({ nativeText: 'Done.</steptml:invoke><｜tool_calls_end｜><|EOT|>', family: 'step3' });
  assert.ok(
    orphan.findings.some((x) => x.severity === 'error'),
    orphan.findings.map((x) => x.rule).join(),
  );
});

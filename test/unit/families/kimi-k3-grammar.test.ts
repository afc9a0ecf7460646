import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import markupInContent from '../../../src/core/checks/markup-in-content';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { response, run } from '../checks/helpers';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const f = getFormat('kimi-k3');
const arg = (k: string, type: string, v: string) => `<|open|>argument key="${k}" type="${type}"<|sep|>${v}<|close|>argument<|sep|>`;
const callK3 = (name: string, i: number, body: string) => `<|open|>call tool="${name}" index="${i}"<|sep|>${body}<|close|>call<|sep|>`;
const tools = (...calls: string[]) => `<|open|>tools<|sep|>${calls.join('')}<|close|>tools<|sep|>`;

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

test('kimi-k3: healthy single call, typed arguments, found by model id and by markers (not as K2)', () => {
  const text = `<|open|>think<|sep|>Read it.<|close|>think<|sep|><|open|>response<|sep|>On it.<|close|>response<|sep|>${tools(callK3('read', 0, arg('path', 'string', '42') + arg('limit', 'number', '5') + arg('opts', 'object', '{"raw":true}')))}<|end_of_msg|>`;
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'Read it.',
    content: 'On it.',
    toolCalls: [{ index: 0, name: 'read', arguments: '{"path":"42","limit":5,"opts":{"raw":true}}' }],
  });
  assert.deepEqual(slices(p, 'call-name', 0), ['read']);
  assert.equal(detectFamily('moonshotai/kimi-k3')?.format.id, 'kimi-k3');
  assert.equal(detectFamily('moonshotai/kimi-k2-0905')?.format.id, 'kimi-k2');
  assert.equal(detectFamily(undefined, text)?.format.id, 'kimi-k3');
});

test('kimi-k3: parallel calls; a malformed non-string value falls back to its text', () => {
  const p = parse(tools(callK3('read', 0, arg('path', 'string', 'a.ts')), callK3('grep', 1, arg('max', 'number', '2x'))));
  assert.deepEqual(p.problems, []);
  assert.deepEqual(
    p.message.toolCalls.map((c) => [c.name, c.arguments]),
    [
      ['read', '{"path":"a.ts"}'],
      ['grep', '{"max":"2x"}'],
    ],
  );
});

test('kimi-k3: a call cut inside a value is kept with what arrived and flagged; no cut ever throws', () => {
  const text = tools(callK3('write', 0, arg('path', 'string', 'a.md') + arg('body', 'string', 'hello')));
  const cut = text.indexOf('hello') + 3;
  const p = parse(text.slice(0, cut));
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'write', arguments: '{"path":"a.md","body":"hel"}' }]);
  assert.ok(codes(p).includes('call-unclosed'), codes(p).join());
  const a = analyze({ nativeText: text.slice(0, cut), family: 'kimi-k3' });
  assert.ok(
    a.findings.some((x) => x.severity !== 'info'),
    a.findings.map((x) => x.rule).join(),
  );
  for (let i = 0; i <= text.length; i++) parse(text.slice(0, i));
});

test('kimi-k3: K3 tool markup leaked into content is flagged', () => {
  const leak = `Let me look.\n${tools(callK3('ls', 0, arg('dir', 'string', 'src')))}`;
  const r = run(markupInContent, { response: response({ model: 'moonshotai/kimi-k3', message: { content: leak }, finishReason: 'stop' }) });
  assert.equal(r.findings.length, 1, JSON.stringify(r.findings));
});

test('kimi-k3: a healthy recording-style turn gives no finding above info', () => {
  const m = {
    reasoning: 'The user wants the weather.',
    content: 'Checking.',
    toolCalls: [{ index: 0, name: 'get_weather', arguments: '{"location":"Boston","days":3}' }],
  };
  const text = f.render(m).text;
  assert.ok(text.includes('<|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>'), text);
  const a = analyze({ nativeText: text, family: 'kimi-k3' });
  assert.deepEqual(
    a.findings.filter((x) => x.severity !== 'info'),
    [],
  );
  assert.deepEqual(f.parse(text).message, m);
});

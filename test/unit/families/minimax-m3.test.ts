import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import markupInContent from '../../../src/core/checks/markup-in-content';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { response, run } from '../checks/helpers';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const NS = ']<]minimax[>[';
const f = getFormat('minimax-m3');
const invoke = (name: string, body: string) => `${NS}<invoke name="${name}">\n${body}\n${NS}</invoke>`;
const el = (k: string, v: string) => `${NS}<${k}>${v}${NS}</${k}>`;

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

// M3 reasons in `<mm:think>…</mm:think>` (ggml-org/llama.cpp common/parsers/minimax-m3.cpp, tests/test-chat.cpp "MiniMax-M3"
// @ 0042e2079d3428ba7af410df553202aa7fdf8d7a).
test('minimax-m3: healthy single call, typed scalars, found by model id and by markers', () => {
  const text = `<mm:think>One read.</mm:think>On it.\n${NS}<tool_call>\n${invoke('read', `${el('path', 'a.ts')}\n${el('limit', '5')}`)}\n${NS}</tool_call>[e~[`;
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'One read.',
    content: 'On it.',
    toolCalls: [{ index: 0, name: 'read', arguments: '{"path":"a.ts","limit":5}' }],
  });
  assert.deepEqual(slices(p, 'call-name', 0), ['read']);
  assert.equal(detectFamily('minimax/minimax-m3')?.format.id, 'minimax-m3');
  assert.equal(detectFamily('minimax/minimax-m2')?.format.id, 'minimax-m2');
  assert.deepEqual(
    detectFamily(undefined, text) && { id: detectFamily(undefined, text)!.format.id, source: detectFamily(undefined, text)!.source },
    { id: 'minimax-m3', source: 'markers' },
  );
});

test('minimax-m3: parallel calls, nested elements, <item> lists and repeated children', () => {
  const order = `${el('customer', `${el('name', 'Ann')}${el('vip', 'true')}`)}\n${el('tag', `${el('item', 'a')}${el('item', 'b')}`)}\n${el('sku', 'x1')}${el('sku', 'x2')}`;
  const p = parse(`${NS}<tool_call>\n${invoke('order', order)}\n${invoke('ls', '')}\n${NS}</tool_call>`);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(
    p.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [
      ['order', { customer: { name: 'Ann', vip: true }, tag: ['a', 'b'], sku: ['x1', 'x2'] }],
      ['ls', {}],
    ],
  );
});

test('minimax-m3: a call cut inside a value is kept with what arrived and flagged; no cut ever throws', () => {
  const text = `${NS}<tool_call>\n${invoke('write', `${el('path', 'a.md')}\n${el('body', 'hello')}`)}\n${NS}</tool_call>`;
  const cut = text.indexOf('hello') + 3;
  const p = parse(text.slice(0, cut));
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'write', arguments: '{"path":"a.md","body":"hel"}' }]);
  assert.ok(codes(p).includes('call-unclosed'), codes(p).join());
  assert.equal(p.problems.find((x) => x.code === 'call-unclosed')?.marker, `${NS}</body>`);
  const a = analyze({ nativeText: text.slice(0, cut), family: 'minimax-m3' });
  assert.ok(
    a.findings.some((x) => x.severity !== 'info'),
    a.findings.map((x) => x.rule).join(),
  );
  for (let i = 0; i <= text.length; i++) parse(text.slice(0, i));
});

test('minimax-m3: M3 markup leaked into content is flagged', () => {
  const leak = `Let me look.\n${NS}<tool_call>\n${invoke('ls', el('dir', 'src'))}\n${NS}</tool_call>`;
  const r = run(markupInContent, { response: response({ model: 'minimax/minimax-m3', message: { content: leak }, finishReason: 'stop' }) });
  assert.equal(r.findings.length, 1, JSON.stringify(r.findings));
  assert.match(r.findings[0].message, /tool_call|invoke/);
});

test('minimax-m3: a healthy recording-style turn gives no finding above info', () => {
  const m = {
    reasoning: 'The user wants the weather.',
    content: 'Checking.',
    toolCalls: [{ index: 0, name: 'get_weather', arguments: '{"location":"Boston","days":3}' }],
  };
  const text = f.render(m).text;
  assert.ok(text.includes(`${NS}<location>Boston${NS}</location>`), text);
  const a = analyze({ nativeText: text, family: 'minimax-m3' });
  assert.deepEqual(
    a.findings.filter((x) => x.severity !== 'info'),
    [],
  );
  assert.deepEqual(f.parse(text).message, m);
});

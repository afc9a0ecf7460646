import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formats } from '../../../src/core/families/index';
import type { AssistantMessage, ParsedNative } from '../../../src/core/model';
import { prng } from '../../helpers/prng';
import { threadCpuMs } from '../../helpers/timing';
import { assertProblems, assertSegments } from './helpers';

const MESSAGES: AssistantMessage[] = [
  {
    reasoning: 'Plan: read <b>both</b> files.',
    content: 'Reading 2 files 📂',
    toolCalls: [
      { index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path":"src/a.ts","range":[1,20],"opts":{"raw":true}}' },
      { index: 1, id: 'functions.write:1', name: 'write', arguments: '{"path":"b.md","content":"# 标题\\n\\"quoted\\" <tag>"}' },
    ],
  },
  { reasoning: 'Only thinking.', content: 'And an answer.', toolCalls: [] },
  { toolCalls: [{ index: 0, id: 'functions.ls:0', name: 'ls', arguments: '{}' }] },
];

/** Parse never throws and its output stays well-formed. */
function check(id: string, parse: (t: string) => ParsedNative, text: string): ParsedNative {
  let p: ParsedNative;
  try {
    p = parse(text);
  } catch (e) {
    assert.fail(`${id} threw on ${JSON.stringify(text)}: ${String(e)}`);
  }
  assert.equal(p.text, text);
  assertSegments(text, p.segments);
  assertProblems(p);
  p.message.toolCalls.forEach((c, i) => assert.equal(c.index, i));
  return p;
}

for (const f of formats) {
  test(`${f.id}: every prefix of rendered turns parses, well-formed, and is only ever reported as cut off`, () => {
    const cutCodes = new Set(['section-unclosed', 'call-unclosed', 'marker-truncated', 'reasoning-unclosed']);
    for (const m of MESSAGES) {
      const text = f.render(m).text;
      for (let i = 0; i <= text.length; i++) {
        const p = check(f.id, f.parse, text.slice(0, i));
        const other = p.problems.filter((x) => !cutCodes.has(x.code));
        assert.deepEqual(other, [], `${f.id}: ${JSON.stringify(text.slice(0, i))}`);
      }
    }
  });

  test(`${f.id}: a truncated tool turn is never reported clean`, () => {
    const text = f.render(MESSAGES[0]).text;
    const lastCall = f
      .render(MESSAGES[0])
      .segments.filter((s) => s.kind === 'call')
      .at(-1)!;
    // Cut anywhere inside the last call past its first 3 characters (a shorter cut-off marker reads as
    // text): the parse must report a problem.
    for (let i = lastCall.start + 4; i < lastCall.end; i++) {
      const p = f.parse(text.slice(0, i));
      assert.ok(p.problems.length > 0, `${f.id}: no problem for ${JSON.stringify(text.slice(0, i))}`);
    }
  });

  test(`${f.id}: random marker soup and garbage never throw`, () => {
    const next = prng(0x7e57 + f.id.length);
    const pieces = [
      ...f.markers,
      ...f.toolMarkers,
      '{',
      '}',
      '"',
      ':',
      ',',
      ' ',
      '\n',
      'x',
      '\\',
      'functions.f:0',
      'to=functions.f ',
      '<function=f>',
      '<parameter=k>',
      '<arg_key>',
      '<invoke name="f">',
      '<parameter name="k">',
      '```json',
      'function',
      '<',
      '>',
      '|',
      '｜',
      '🎉',
    ];
    for (let k = 0; k < 800; k++) {
      let s = '';
      const n = Math.floor(next() * 24);
      for (let j = 0; j < n; j++) {
        const piece = pieces[Math.floor(next() * pieces.length)];
        // Sometimes cut a piece short, as a truncated stream would.
        s += next() < 0.25 ? piece.slice(0, Math.floor(next() * piece.length)) : piece;
      }
      check(f.id, f.parse, s);
    }
    for (let k = 0; k < 200; k++) {
      const len = Math.floor(next() * 64);
      const s = Array.from({ length: len }, () => String.fromCharCode(Math.floor(next() * 0x3000))).join('');
      check(f.id, f.parse, s);
    }
  });
}

test('large and adversarial inputs parse in linear time', () => {
  // Budgets are ~20x what a 2-core machine measures, so a shared CI box stays green while a quadratic
  // regression (seconds to minutes at these sizes) still fails. They are CPU time of this thread: on a loaded
  // machine the wall clock also counts other processes' turns, a quadratic parse costs its CPU anywhere.
  const adversarial = [
    '<'.repeat(200_000),
    '<|tool_call x '.repeat(20_000),
    `<think>${'</thin x '.repeat(20_000)}`,
    '{"a":'.repeat(40_000),
  ];
  for (const f of formats) {
    const calls = Array.from({ length: 2000 }, (_, i) => ({
      index: i,
      id: `functions.f:${i}`,
      name: 'f',
      arguments: JSON.stringify({ i, text: 'x <b> y '.repeat(50) }),
    }));
    const text = f.render({ reasoning: 'r '.repeat(20_000), content: 'c <div> '.repeat(20_000), toolCalls: calls }).text;
    let t0 = threadCpuMs();
    const p = f.parse(text);
    let ms = threadCpuMs() - t0;
    assert.equal(p.message.toolCalls.length, 2000, f.id);
    assert.deepEqual(p.problems, [], f.id);
    assert.ok(ms < 1500, `${f.id} took ${ms.toFixed(0)} ms of CPU for ${text.length} chars`);
    for (const a of adversarial) {
      t0 = threadCpuMs();
      f.parse(a);
      ms = threadCpuMs() - t0;
      assert.ok(ms < 5000, `${f.id} took ${ms.toFixed(0)} ms of CPU on ${JSON.stringify(a.slice(0, 20))}…`);
    }
  }
});

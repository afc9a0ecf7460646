// The JSON report writer (src/cli/json-out.ts): the text JSON.stringify(value, null, 2) gives, written in chunks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JoinedText, jsonText, printJson, writeJson } from '../../../src/cli/json-out';
import { prng } from '../../helpers/prng';

/** What JSON.stringify writes, with the C1 controls escaped as the writer escapes them. */
const expected = (v: unknown) => JSON.stringify(v, null, 2)?.replace(/[\u007f-\u009f]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);

test('equals JSON.stringify(value, null, 2) on the shapes a report has', () => {
  const values: unknown[] = [
    null,
    0,
    -0,
    1.5e300,
    NaN,
    Infinity,
    true,
    'text',
    '',
    [],
    {},
    [[], {}, [[]], { a: {} }],
    { a: undefined, b: () => 1, c: Symbol('x'), d: 1 },
    { a: undefined },
    [undefined, () => 1, Symbol('y'), 2],
    { date: new Date(0), boxed: [new Number(3), new String('s'), new Boolean(false)] },
    { toJSON: (k: string) => ({ key: k }) },
    { nested: { toJSON: (k: string) => `key ${k}` }, list: [{ toJSON: (k: string) => k }] },
    { 'quote"key': 1, 'new\nline': 2, '': 3, '\u0085': 4 },
    {
      family: 'kimi-k2',
      familySource: 'given',
      content: 'Hello "world"\n\t\\ \u0000\u001b[31m \u2028 é 日本語 😀',
      reasoning: null,
      calls: [
        {
          index: 0,
          id: null,
          name: 'read',
          arguments: '{"path":"a"}',
          argumentsJson: { path: 'a', n: [1, 2, { x: null }] },
          complete: false,
          start: 3,
          end: 9,
        },
      ],
      findings: [{ rule: 'call-unclosed', severity: 'error', message: 'm', start: 1, end: 2, location: 'tool_calls[0]' }],
      source: 'raw',
      providerCalls: null,
      mismatches: [],
    },
  ];
  values.forEach((v, i) => assert.equal(jsonText(v), expected(v) ?? '', `value ${i}`));
  assert.equal(jsonText(undefined), '');
});

test('long strings are escaped in pieces exactly as JSON.stringify escapes them', () => {
  const rand = prng(7);
  const alphabet = [
    'a',
    'b',
    ' ',
    '"',
    '\\',
    '\n',
    '\r',
    '\t',
    '\b',
    '\f',
    '\u0000',
    '\u001f',
    '\u007f',
    '\u0085',
    '\u009f',
    '\u00a0',
    'é',
    '日',
    '\u2028',
    '😀',
    '\ud800',
    '\udc00',
    '\udbff',
    '\udfff',
  ];
  for (let round = 0; round < 20; round++) {
    const n = Math.floor(rand() * 300_000);
    // Mostly long plain runs (so some cross the chunk size), with escapes and surrogates here and there.
    let s = '';
    while (s.length < n) s += rand() < 0.7 ? 'x'.repeat(Math.floor(rand() * 100_000)) : alphabet[Math.floor(rand() * alphabet.length)];
    const chunks: string[] = [];
    writeJson({ content: s, calls: [{ arguments: s.slice(0, 5000) }] }, (c) => chunks.push(c));
    assert.equal(chunks.join(''), expected({ content: s, calls: [{ arguments: s.slice(0, 5000) }] }));
    // Every chunk encodes on its own: no chunk ends between the halves of a surrogate pair.
    for (let i = 0; i + 1 < chunks.length; i++) {
      const last = chunks[i].charCodeAt(chunks[i].length - 1);
      const next = chunks[i + 1].charCodeAt(0);
      assert.ok(!(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff), `chunk ${i} splits a surrogate pair`);
    }
    // A report holding a long text is handed over in bounded pieces.
    assert.ok(
      chunks.every((c) => c.length <= 2 * 65536 + 16),
      `chunk of ${Math.max(...chunks.map((c) => c.length))}`,
    );
  }
});

test('the output has no control character besides the line breaks of the layout, and parses back', () => {
  const v = { text: 'a\u0085b\u007fc\u009b[31m'.repeat(2000), short: '\u0090' };
  const text = jsonText(v);
  assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text));
  assert.deepEqual(JSON.parse(text), v);
});

test('printJson: the same text streamed through io.write as printed whole through io.out', () => {
  const v = { content: 'x'.repeat(200_000) + '"', n: 1 };
  const whole: string[] = [];
  printJson({ out: (t) => whole.push(t), err: () => {} }, v);
  const streamed: string[] = [];
  printJson({ out: () => assert.fail('out is not used when write is there'), err: () => {}, write: (c) => streamed.push(c) }, v);
  assert.equal(whole.length, 1);
  assert.equal(streamed.join(''), whole[0] + '\n');
  assert.equal(whole[0], JSON.stringify(v, null, 2));
});

test('throws as JSON.stringify throws', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(() => jsonText(cyclic), TypeError);
  assert.throws(() => jsonText({ n: 1n }), TypeError);
});

test('a JoinedText is written as the string of its parts joined, without joining them', () => {
  const parts = ['x'.repeat(100_000) + '"é', '\u0085tail 😀', 'b'];
  const v = { content: new JoinedText(parts, '\n\n'), n: [new JoinedText(['a', 'b'], '-')] };
  assert.equal(jsonText(v), expected({ content: parts.join('\n\n'), n: ['a-b'] }));
  assert.equal(JSON.stringify(v), JSON.stringify({ content: parts.join('\n\n'), n: ['a-b'] }));
  // A surrogate pair split between parts is one character of the joined text.
  const split = new JoinedText(['a\ud83d', '\ude00b'], '');
  assert.equal(jsonText(split), JSON.stringify('a😀b'));
});

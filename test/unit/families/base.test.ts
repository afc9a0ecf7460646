import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  findTruncated,
  firstTruncated,
  jsonMembers,
  jsonToParams,
  jsonValueEnd,
  modelKey,
  paramsToJson,
  truncatedAt,
} from '../../../src/core/families/shared';
import { prng } from '../../helpers/prng';

const SE = '<|tool_calls_section_end|>';

test('truncatedAt: a marker cut by the end of the text, from 4 characters on', () => {
  const text = `x${SE.slice(0, -1)}`;
  assert.deepEqual(truncatedAt(text, 1, [SE]), { marker: SE, start: 1, end: text.length });
  assert.deepEqual(truncatedAt('x<|to', 1, [SE]), { marker: SE, start: 1, end: 5 });
  assert.equal(truncatedAt('x<|t', 1, [SE]), undefined);
  // A complete marker is not truncated.
  assert.equal(truncatedAt(`x${SE}`, 1, [SE]), undefined);
});

test('truncatedAt: mid-text only when just closing punctuation is missing', () => {
  assert.equal(truncatedAt(`${SE.slice(0, -1)}\n<|im_end|>`, 0, [SE])?.marker, SE);
  assert.equal(truncatedAt(`${SE.slice(0, -2)} more`, 0, [SE])?.marker, SE);
  // Missing letters, a following word character or `>`: another word or tag, not a broken marker.
  assert.equal(truncatedAt('<|tool_calls_sect more', 0, [SE]), undefined);
  assert.equal(truncatedAt('<thinking> aloud', 0, ['<think>']), undefined);
  assert.equal(truncatedAt('<function> tag', 0, ['<function=']), undefined);
  assert.equal(truncatedAt('</think\nAnswer', 0, ['</think>'])?.marker, '</think>');
});

test('truncatedAt: candidates are tried in the order given', () => {
  const text = '<|tool_call';
  assert.equal(truncatedAt(text, 0, ['<|tool_call_end|>', '<|tool_call_begin|>'])?.marker, '<|tool_call_end|>');
  assert.equal(truncatedAt(text, 0, ['<|tool_call_begin|>', '<|tool_call_end|>'])?.marker, '<|tool_call_begin|>');
});

test('findTruncated finds every cut marker in a range', () => {
  const text = 'a </think\nb <|im_end|';
  assert.deepEqual(
    findTruncated(text, ['</think>', '<|im_end|>'], 0, text.length).map((h) => [h.marker, text.slice(h.start, h.end)]),
    [
      ['</think>', '</think'],
      ['<|im_end|>', '<|im_end|'],
    ],
  );
});

/** The scan as first written: every position of the range, one at a time (the reference the fast scan must match). */
function findTruncatedByChar(text: string, markers: readonly string[], from: number, to: number) {
  const firsts = new Set(markers.map((m) => m[0]));
  const hits = [];
  for (let i = from; i < to; i++) {
    if (!firsts.has(text[i])) continue;
    const hit = truncatedAt(text, i, markers);
    if (hit && hit.end <= to) {
      hits.push(hit);
      i = hit.end - 1;
    }
  }
  return hits;
}

test('findTruncated matches a character-by-character scan on random marker soup, whatever the range', () => {
  // Several first characters (`<`, `]`, `[`), markers sharing prefixes, full-width DeepSeek bars, truncations at
  // the end of the text and mid-text.
  const markers = [SE, '<|tool_call_end|>', '<|im_end|>', '</think>', '<think>', '<｜tool▁call▁end｜>', ']~!b[', '[e~['];
  const pieces = [
    ...markers,
    ...markers.map((m) => m.slice(0, -1)),
    ...markers.map((m) => m.slice(0, 4)),
    '<',
    '|',
    '>',
    ' ',
    '\n',
    'x',
    'é',
    '😀',
    '<|',
    '<｜',
  ];
  const rand = prng(20261130);
  for (let k = 0; k < 2000; k++) {
    let text = '';
    for (let n = 1 + Math.floor(rand() * 12); n > 0; n--) text += pieces[Math.floor(rand() * pieces.length)];
    const from = Math.floor(rand() * (text.length + 1));
    const to = from + Math.floor(rand() * (text.length - from + 1));
    const expected = findTruncatedByChar(text, markers, from, to);
    assert.deepEqual(findTruncated(text, markers, from, to), expected, JSON.stringify({ text, from, to }));
    assert.deepEqual(firstTruncated(text, markers, from, to), expected[0], JSON.stringify({ text, from, to }));
    assert.deepEqual(findTruncated(text, markers, from, to, 2), expected.slice(0, 2), JSON.stringify({ text, from, to }));
  }
});

test('findTruncated never reports a marker past the end of its range, and finds one in a long text', () => {
  const text = `a </think b ${SE.slice(0, -1)}`;
  const at = text.indexOf('</think');
  assert.deepEqual(findTruncated(text, ['</think>', SE], 0, at + 6), []);
  assert.deepEqual(findTruncated(text, ['</think>', SE], 0, at + 7), [{ marker: '</think>', start: at, end: at + 7 }]);
  const long = `${'word '.repeat(200_000)}${SE.slice(0, -1)}`;
  assert.deepEqual(firstTruncated(long, [SE], 0, long.length), { marker: SE, start: 1_000_000, end: long.length });
  assert.equal(firstTruncated(long, [SE], 0, 1_000_000), undefined);
});

test('jsonValueEnd: balanced end outside strings, -1 when unterminated', () => {
  const obj = '{"a": "x}y", "b": [1, {"c": "\\"}"}]}';
  assert.equal(jsonValueEnd(`  ${obj} tail`, 0), obj.length + 2);
  assert.equal(jsonValueEnd('{"a": "cut', 0), -1);
  assert.equal(jsonValueEnd('{"a": [1, 2}', 0), -1);
  assert.equal(jsonValueEnd('"str\\"ing" x', 0), 10);
  assert.equal(jsonValueEnd('42, 1', 0), 2);
  assert.equal(jsonValueEnd('   ', 0), -1);
});

test('jsonMembers: raw member ranges, tolerant of a cut-off value', () => {
  const text = '{"name": "read", "arguments": {"path": "a"}}';
  const members = jsonMembers(text, 0, text.length)!;
  assert.deepEqual(
    members.map((m) => [m.key, text.slice(...m.valueRange), m.complete]),
    [
      ['name', '"read"', true],
      ['arguments', '{"path": "a"}', true],
    ],
  );
  const cut = '{"name": "read", "arguments": {"path": "sr';
  assert.deepEqual(
    jsonMembers(cut, 0, cut.length)!
      .map((m) => [m.key, cut.slice(...m.valueRange), m.complete])
      .at(-1),
    ['arguments', '{"path": "sr', false],
  );
  assert.equal(jsonMembers('[1]', 0, 3), undefined);
});

test('XML argument values: canonical JSON both ways', () => {
  assert.equal(
    paramsToJson([
      ['s', 'text'],
      ['n', '42'],
      ['b', 'true'],
      ['z', 'null'],
      ['o', '{"k": [1]}'],
      ['q', '"quoted"'],
      ['bad', '{not json'],
    ]),
    '{"s":"text","n":42,"b":true,"z":null,"o":{"k":[1]},"q":"\\"quoted\\"","bad":"{not json"}',
  );
  assert.deepEqual(jsonToParams('{"s": "x", "n": 1, "o": {"a": [true]}}'), [
    ['s', 'x'],
    ['n', '1'],
    ['o', '{"a":[true]}'],
  ]);
  assert.equal(jsonToParams('[1, 2]'), undefined);
  assert.equal(jsonToParams('{"a": '), undefined);
});

test('modelKey: lower-cased, provider prefix and routing suffix dropped', () => {
  assert.equal(modelKey('moonshotai/Kimi-K2-0905:exacto'), 'kimi-k2-0905');
  assert.equal(modelKey('deepseek/deepseek-chat-v3.1:free'), 'deepseek-chat-v3.1');
  assert.equal(modelKey('/models/Qwen3-Coder-480B'), 'qwen3-coder-480b');
});

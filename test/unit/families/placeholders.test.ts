import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const TEXT =
  '<think>plan</think>Reading it.<|reserved_token_163595|><|reserved_token_163597|>functions.read:0<|reserved_token_163598|>{"filePath": "a.ts"}<|reserved_token_163599|><|reserved_token_163596|><|reserved_token_163586|>';

test('Kimi: placeholders read as markers, offsets in the original text, every prefix well-formed', () => {
  const kimi = getFormat('kimi-k2');
  const p = kimi.parse(TEXT);
  assert.equal(p.text, TEXT);
  assert.deepEqual(codes(p), Array(6).fill('marker-placeholder'));
  assert.equal(TEXT.slice(p.problems[0].start, p.problems[0].end), '<|reserved_token_163595|>');
  const args = p.segments.find((s) => s.kind === 'arguments')!;
  assert.equal(TEXT.slice(args.start, args.end), '{"filePath": "a.ts"}');
  const section = p.segments.find((s) => s.kind === 'section')!;
  assert.ok(TEXT.slice(section.start, section.end).startsWith('<|reserved_token_163595|>'));
  assert.ok(TEXT.slice(section.start, section.end).endsWith('<|reserved_token_163596|>'));
  for (let i = 0; i <= TEXT.length; i++) {
    const q = kimi.parse(TEXT.slice(0, i));
    assertSegments(q.text, q.segments);
    assertProblems(q);
  }
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatStream } from '../../../../src/cli/commands/tokens';
import type { TokenStream } from '../../../../src/core/tokens/stream';

test('the token view renders a stream of 300,000 long tokens in one segment (300,000 lines) (no spread into one push call)', () => {
  const n = 300_000;
  const tokens = Array.from({ length: n }, (_, i) => ({
    id: i % 1000,
    text: 'x'.repeat(90),
    kind: 'text' as const,
    segment: 'content' as const,
    start: i * 3,
    end: i * 3 + 3,
  }));
  const stream = {
    source: 'text',
    tokenizer: 'test',
    text: '',
    segments: [],
    tokens,
    findings: [],
    accounting: { counted: n, mismatch: false },
  } as unknown as TokenStream;
  const out = formatStream('big', stream);
  assert.match(out, /^big: 300,000 tokens|^big: 300000 tokens/);
  assert.ok(out.split('\n').length > 290_000, 'wrapped into many lines');
});

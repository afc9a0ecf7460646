import assert from 'node:assert/strict';
import { test } from 'node:test';
import { colourWanted, findingLine, palette, safeLine, safeText, terminalGuard } from '../../../src/cli/terminal';

const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

test('network text on one line: title escapes, CSI, \\r, bidi and newlines are escaped, nothing raw remains', () => {
  const evil = 'boom\u001b]0;pwned\u0007 \u001b[2J\u001b[31mred\rover\nnext\u202eevil\u0000';
  const s = safeLine(evil);
  assert.doesNotMatch(s, RAW);
  assert.doesNotMatch(s, /\u202e/);
  assert.equal(s, 'boom\\e]0;pwned\\u{7} \\e[2J\\e[31mred\\rover\\nnext\\u{202e}evil\\u{0}');
  assert.equal(safeLine('plain ünïcode 文字'), 'plain ünïcode 文字');
});

test('long network text is cut and the cut is said; a surrogate pair is never split', () => {
  const big = 'x'.repeat(5_000_000);
  const s = safeLine(big, 1000);
  assert.equal(s, `${'x'.repeat(1000)}… [cut: 4,999,000 more characters]`);
  const emoji = `${'a'.repeat(9)}😀tail`;
  assert.equal(safeLine(emoji, 10), `${'a'.repeat(9)}… [cut: 6 more characters]`);
  const multi = safeText('line 1\nline\u001b[1A 2\t\n' + 'y'.repeat(100), 20);
  assert.equal(multi, 'line 1\nline\\e[1A 2\t\ny…\n[cut: 99 more characters]');
});

test('the last guard keeps Tokenscope colour codes, newlines and tabs and escapes any other control character', () => {
  const ours = palette(true).severity('error');
  assert.equal(terminalGuard(`${ours}\tok\n`), '\u001b[31;1merror\u001b[0m\tok\n');
  assert.equal(terminalGuard('a\u001b]0;t\u0007b\rc'), 'a\\e]0;t\\u{7}b\\rc');
});

test('colour only on a terminal, never with NO_COLOR, forced with FORCE_COLOR; findings colour severity and rule', () => {
  assert.equal(colourWanted({ isTTY: true }, {}), true);
  assert.equal(colourWanted({ isTTY: false }, {}), false);
  assert.equal(colourWanted({ isTTY: true }, { NO_COLOR: '1' }), false);
  assert.equal(colourWanted({ isTTY: true }, { TERM: 'dumb' }), false);
  assert.equal(colourWanted({ isTTY: false }, { FORCE_COLOR: '1' }), true);
  const f = { severity: 'error' as const, rule: 'upstream-error', location: 'body', message: 'HTTP 500: \u001b]0;x\u0007' };
  assert.equal(findingLine(f, palette(false)), 'error upstream-error (body): HTTP 500: \\e]0;x\\u{7}');
  assert.equal(
    terminalGuard(findingLine(f, palette(true))),
    '\u001b[31;1merror\u001b[0m \u001b[35mupstream-error\u001b[0m (body): HTTP 500: \\e]0;x\\u{7}',
  );
});

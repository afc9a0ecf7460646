import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../../src/cli/args';
import { UserError } from '../../../src/core/model';

const known = { values: ['model', 'format', 'o'], booleans: ['json'] };

function fails(argv: string[], message: RegExp): void {
  assert.throws(
    () => parseArgs(argv, known),
    (e: unknown) => e instanceof UserError && e.exitCode === 2 && message.test(e.message),
  );
}

test('a value flag followed by another option is a missing value, not a value of "--json"', () => {
  fails(['--model', '--json', 'FILE'], /^--model needs a value$/);
  fails(['-o', '--json'], /^-o needs a value$/);
  fails(['FILE', '--model'], /^--model needs a value$/);
});

test('values that merely start with a dash still pass, and = takes anything', () => {
  const a = parseArgs(['-o', '-', '--model=--odd', 'FILE'], known);
  assert.equal(a.str('o'), '-');
  assert.equal(a.str('model'), '--odd');
  assert.deepEqual(a.positional, ['FILE']);
});

test('-h is --help', () => {
  assert.equal(parseArgs(['-h'], known).bool('help'), true);
});

test('unknown short options are errors, never file names', () => {
  fails(['-x', 'FILE'], /^unknown option -x; see --help$/);
  fails(['-json'], /^unknown option -json \(did you mean --json\?\)/);
  assert.deepEqual(parseArgs(['-'], known).positional, ['-']);
});

test('a boolean flag given a value is an error instead of being silently true', () => {
  fails(['--json=no'], /^--json takes no value$/);
});

test('a misspelt flag names the nearest known one', () => {
  fails(['--fromat', 'md'], /^unknown option --fromat \(did you mean --format\?\); see --help$/);
  fails(['--zzzzzz'], /^unknown option --zzzzzz; see --help$/);
});

test('a count flag is a whole number of at least 1, else its default', () => {
  const counts = { values: ['samples'] };
  assert.equal(parseArgs([], counts).positiveInt('samples', 3), 3);
  assert.equal(parseArgs(['--samples', '5'], counts).positiveInt('samples', 3), 5);
  for (const [v, message] of [
    ['0', /^--samples must be a positive whole number$/],
    ['2.5', /^--samples must be a positive whole number$/],
    ['many', /^--samples must be a number, got "many"$/],
  ] as const) {
    assert.throws(
      () => parseArgs(['--samples', v], counts).positiveInt('samples', 3),
      (e: unknown) => e instanceof UserError && message.test(e.message),
      v,
    );
  }
});

test('node:util parseArgs underneath: a value starting with one dash is a value; counts have an upper bound; lists repeat', () => {
  const k = { values: ['limit', 'samples'], repeatable: ['custom'], booleans: ['json'] };
  assert.equal(parseArgs(['--limit', '-5'], k).str('limit'), '-5');
  assert.throws(() => parseArgs(['--limit', '-5'], k).positiveInt('limit', 1), /^UserError: --limit must be a positive whole number$/);
  assert.throws(
    () => parseArgs(['--samples', '1000000000'], k).positiveInt('samples', 3, 1000),
    /--samples must be at most 1,000, got 1000000000/,
  );
  assert.throws(() => parseArgs(['--samples', '2000000'], k).positiveInt('samples', 3), /at most 1,000,000/);
  const a = parseArgs(['--custom', 'a=1', 'FILE', '--custom=b=2', '--json', '--', '--not-a-flag'], k);
  assert.deepEqual(a.list('custom'), ['a=1', 'b=2']);
  assert.deepEqual(a.positional, ['FILE', '--not-a-flag']);
  assert.equal(a.bool('json'), true);
  assert.throws(() => parseArgs(['--limit', ''], k).num('limit', 1), /--limit must be a number, got ""/);
});

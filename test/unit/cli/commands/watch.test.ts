/** `tokenscope watch` without a subcommand: bad usage, said in one line on stderr (as `policy` does). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from '../../../../src/cli/main';

test('watch without a subcommand is bad usage in one line; --help still prints the help', async () => {
  const out: string[] = [];
  const err: string[] = [];
  assert.equal(await main(['watch'], { out: (t) => out.push(t), err: (t) => err.push(t) }), 2);
  assert.deepEqual(out, []);
  assert.deepEqual(err, ['tokenscope watch: watch needs add, list, run or remove; see --help']);
  const help: string[] = [];
  assert.equal(await main(['watch', '--help'], { out: (t) => help.push(t), err: (t) => help.push(t) }), 0);
  assert.match(help.join('\n'), /^usage: tokenscope watch add /);
});

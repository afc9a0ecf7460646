import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../../src/cli/main';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

test('unknown command exits 2 with a one-line reason and the usage', async () => {
  const c = capture();
  assert.equal(await main(['frobnicate'], c.io), 2);
  assert.match(c.err.join(''), /unknown command "frobnicate"/);
});

test('--help lists every command', async () => {
  const c = capture();
  assert.equal(await main(['--help'], c.io), 0);
  for (const name of ['lint', 'tokens', 'serve', 'captures', 'show', 'rerun', 'compare', 'verify', 'export', 'import']) {
    assert.match(c.out.join(''), new RegExp(`\\b${name}\\b`));
  }
});

test('`help CMD` prints the help of CMD, `help UNKNOWN` is an unknown command', async () => {
  const c = capture();
  assert.equal(await main(['help', 'lint'], c.io), 0);
  assert.match(c.out.join(''), /^usage: tokenscope lint /);
  const u = capture();
  assert.equal(await main(['help', 'frobnicate'], u.io), 2);
  assert.match(u.err.join(''), /unknown command "frobnicate"/);
});

// What a token worker pays for before its first line: its code's modules. undici (the Hub downloads' HTTP client,
// about half the batch worker's bundle) is loaded on the first download only, not when the worker starts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(__dirname, '..', '..', '..');

test('the batch and token workers’ code loads no undici until a tokenizer is downloaded', () => {
  const script = `
    require('./src/core/tokens/batch/process.ts');
    require('./src/core/tokens/resolve.ts');
    require('./src/core/tokens/exchange.ts');
    const loaded = Object.keys(require.cache);
    process.stdout.write(JSON.stringify({ modules: loaded.length, undici: loaded.filter((k) => k.includes('/node_modules/undici/')).length }));
  `;
  const out = execFileSync(process.execPath, ['--import', './test/helpers/ts-register.mjs', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const { modules, undici } = JSON.parse(out) as { modules: number; undici: number };
  assert.ok(modules > 50, `${modules} modules loaded`);
  assert.equal(undici, 0, 'undici modules loaded at start');
});

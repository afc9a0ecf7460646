import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { TS_LOADER } from '../../helpers/ts-loader';

test('a reader that closes the pipe early (`tokenscope … | head -1`) ends the CLI quietly, exit 0', async () => {
  // Many lines, written one by one after the reader is gone: each write fails with EPIPE.
  const script = `
    const { runFromProcess } = require(${JSON.stringify(join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts'))});
    process.argv = [process.argv[0], 'tokenscope', 'agents', '--port', '1'];
    setTimeout(() => runFromProcess(), 300);
  `;
  const child = spawn(process.execPath, [...TS_LOADER, '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(err, '', 'no stack trace');
  assert.equal(code, 0);
});

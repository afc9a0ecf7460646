// `tokenscope serve` on a real terminal (a pseudo-terminal from util-linux `script`): Tokenscope's own colours
// appear, and a provider name full of escape sequences from the upstream is shown escaped, never interpreted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { brokenKimiStream, requestBody } from '../../fixtures/export/captures';
import { rawRequest, startUpstream, tempDir } from '../../unit/proxy/local-upstream';

const cliJs = join(__dirname, '..', '..', '..', 'dist', 'cli.js');
const bin = join(__dirname, '..', '..', '..', 'bin', 'tokenscope.js');
const hasScript = spawnSync('script', ['--version']).status === 0;
const skip = !hasScript
  ? 'skipped: util-linux `script` is not installed'
  : !existsSync(cliJs)
    ? 'skipped: dist/cli.js is missing (run `npm run build`)'
    : false;
const EVIL = 'Evil\u001b[31m|\u001b[8m|\u001b]0;title\u0007|\u009b31m|\ufdd0\ufde1\ufdd4';

test('serve on a terminal colours its findings and shows a hostile provider name escaped', { skip }, async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(brokenKimiStream().join('').replaceAll('"Chutes"', JSON.stringify(EVIL)));
  });
  const data = tempDir();
  const cmd = `exec node ${JSON.stringify(bin)} serve --port 0 --data-dir ${JSON.stringify(data.dir)} --upstream ${up.url}`;
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
  const until = async (re: RegExp, what: string) => {
    const end = Date.now() + 30_000;
    while (!re.test(out) && Date.now() < end && child.exitCode === null) await new Promise((r) => setTimeout(r, 25));
    assert.match(out, re, `${what}: ${JSON.stringify(out)}`);
  };
  try {
    await until(/http:\/\/127\.0\.0\.1:(\d+)\/v1 /, 'serve is listening');
    const port = /http:\/\/127\.0\.0\.1:(\d+)\/v1 /.exec(out)![1];
    await rawRequest(`http://127.0.0.1:${port}/v1/chat/completions`, {
      body: requestBody(),
      headers: { 'content-type': 'application/json' },
    });
    await until(/section-unclosed/, 'the finding line');
    await new Promise((r) => setTimeout(r, 200));
    // Tokenscope's own colour reaches the terminal…
    assert.match(out, /\u001b\[31;1merror\u001b\[0m \u001b\[35msection-unclosed\u001b\[0m/);
    // …and the upstream's provider name arrives escaped, with no escape sequence on its line.
    const line = out.split(/\r?\n/).find((l) => l.includes('via Evil'));
    assert.ok(line, JSON.stringify(out));
    assert.ok(line.includes('Evil\\e[31m|\\e[8m|\\e]0;title\\u{7}|\\u{9b}31m|\\ufdd0\\ufde1\\ufdd4'), JSON.stringify(line));
    assert.doesNotMatch(line, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufdd0-\ufdef]/, JSON.stringify(line));
    assert.doesNotMatch(
      out.replace(/\u001b\[(?:0|1|2|31;1|33|36|35)m/g, ''),
      /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f]/,
      "only Tokenscope colour codes (and the pty's \\r\\n)",
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    await up.close();
    data.remove();
  }
});

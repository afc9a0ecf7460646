// What the CLI prints of network text: escaped, cut when long, coloured only when asked (issue #16).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { COMMAND_NAMES, main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';
import { terminalGuard } from '../../../src/cli/terminal';
import { exited, rawRequest, serveChild, startRig, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';

const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const HOSTILE = 'Provider failed \u001b]0;pwned\u0007 \u001b[2J\u001b[H\roverwritten';

async function cli(argv: string[], colour = false): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  // As a terminal gets it: through the last guard, which turns the palette's colour markers into SGR sequences.
  const io: CliIO = {
    out: (t) => (out += terminalGuard(t.endsWith('\n') ? t : t + '\n')),
    err: (t) => (err += terminalGuard(t.endsWith('\n') ? t : t + '\n')),
    colour,
  };
  const code = await main(argv, io);
  return { code, out, err };
}

const errorBody = (extra = 0) => JSON.stringify({ error: { message: HOSTILE + 'x'.repeat(extra), code: 500 } });

test('show prints a hostile, 5 MB upstream error escaped and cut, saying so', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json', 'x-evil': 'a\u0007b'.replace('\u0007', '') }).end(errorBody(5 * 1024 * 1024));
  });
  const rig = await startRig({ default: up.url });
  try {
    assert.equal(
      (await rawRequest(`${rig.proxy.url}/v1/chat/completions`, { body: '{"model":"m"}', headers: { 'user-agent': 'evil\u0009agent' } }))
        .status,
      500,
    );
    await waitFor(() => rig.store.list()[0]?.state === 'complete', 'the capture');
    const id = rig.store.list()[0].id;
    await rig.proxy.close();
    await rig.store.close();
    const shown = await cli(['show', id, '--data-dir', rig.dataDir]);
    assert.equal(shown.code, 0, shown.err);
    assert.doesNotMatch(shown.out, RAW_CONTROL);
    assert.match(
      shown.out,
      /error upstream-error \(wire\): The upstream answered HTTP 500: Provider failed \\e\]0;pwned\\u\{7\} \\e\[2J\\e\[H\\roverwrittenx+… \[cut: [\d,]+ more characters\]/,
    );
    assert.ok(shown.out.length < 10_000, `${shown.out.length} characters printed`);
    assert.match(shown.out, /long values are cut; `tokenscope show \S+ --json` prints them whole/);
  } finally {
    await rig.close();
    await up.close();
  }
});

test('lint and tokens escape network text; lint colours severity and rule ids only when colour is on', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'error.json');
  writeFileSync(file, errorBody());
  try {
    const plain = await cli(['lint', file]);
    assert.equal(plain.code, 1);
    assert.doesNotMatch(plain.out, RAW_CONTROL);
    assert.match(plain.out, /\\e\]0;pwned\\u\{7\}/);
    assert.match(plain.out, /^error {3}upstream-error/m);
    const coloured = await cli(['lint', file], true);
    assert.match(coloured.out, /\u001b\[31;1merror {2}\u001b\[0m \u001b\[35mupstream-error\u001b\[0m/);
    assert.doesNotMatch(coloured.out.replace(/\u001b\[[0-9;]*m/g, ''), RAW_CONTROL, "only Tokenscope's own colour codes");
    const off = await cli(['lint', file, '--no-color'], true);
    assert.doesNotMatch(off.out, /\u001b/);
    const tokens = await cli(['tokens', file, '--family', 'kimi-k2', '--tokenizer-dir', join(tmp.dir, 'none'), '--offline']);
    assert.doesNotMatch(tokens.out + tokens.err, RAW_CONTROL);
  } finally {
    tmp.remove();
  }
});

test('serve prints a hostile upstream error escaped on one line', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' }).end(errorBody(3000));
  });
  const data = tempDir();
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
  try {
    await rawRequest(`${s.url}/v1/chat/completions`, { body: '{"model":"m"}', headers: { 'user-agent': 'agent' } });
    await waitFor(() => /upstream-error/.test(s.output()), 'the finding line', 15_000);
    const line = s
      .output()
      .split('\n')
      .find((l) => l.includes('upstream-error'))!;
    assert.doesNotMatch(s.output(), RAW_CONTROL);
    assert.match(line, /\\e\]0;pwned\\u\{7\}.*… \[cut: [\d,]+ more characters\]$/);
  } finally {
    s.child.kill('SIGTERM');
    await exited(s.child);
    await up.close();
    data.remove();
  }
});

test('every command documents its exit codes under --help; counts are bounded; verify shows a few bad lines and a count', async () => {
  assert.ok(COMMAND_NAMES.length >= 16);
  for (const c of COMMAND_NAMES) {
    const r = await cli([c, '--help']);
    assert.equal(r.code, 0, c);
    assert.match(r.out, /Exit status/, c);
  }
  assert.match((await cli(['--help'])).out, /Exit status:\n {2}0 .*\n {2}1 .*\n {7}.*\n {2}2 .*\n {2}130 /);
  const huge = await cli(['compare', '--request', 'x.json', '--samples', '1000000000']);
  assert.equal(huge.code, 2);
  assert.match(huge.err, /--samples must be at most 1,000, got 1000000000/);
  assert.match((await cli(['compare', '--request', 'x.json', '--concurrency', '100000'])).err, /--concurrency must be at most 64/);
  const tmp = tempDir();
  const garbage = join(tmp.dir, 'garbage.jsonl');
  writeFileSync(garbage, Array.from({ length: 5000 }, (_, i) => `not json ${i}`).join('\n'));
  try {
    const v = await cli(['verify', garbage, '--provider', 'x']);
    assert.equal(v.code, 2);
    const lines = v.err.trim().split('\n');
    assert.ok(lines.length <= 7, `${lines.length} lines`);
    assert.match(v.err, /garbage\.jsonl:1 skipped/);
    assert.match(v.err, /… and 4995 more lines skipped \(5000 in all\)/);
  } finally {
    tmp.remove();
  }
});

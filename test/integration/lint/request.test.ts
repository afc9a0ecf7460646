// `tokenscope lint --request FILE|-` without a response: the request body alone, judged by the history rules.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { repoRoot } from '../../helpers/shared';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-lint-request-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

const call = (id: string) => ({ id, type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } });
/** Kimi K2.5 thinks by default; the agent dropped the reasoning of its tool-call turn and a user message cut in. */
const broken = {
  model: 'moonshotai/kimi-k2.5',
  messages: [
    { role: 'user', content: 'read a' },
    { role: 'assistant', content: '', tool_calls: [call('functions.read:0')] },
    { role: 'user', content: 'hurry' },
    { role: 'tool', tool_call_id: 'functions.read:0', content: 'ok' },
  ],
};
const healthy = {
  model: 'moonshotai/kimi-k2.5',
  messages: [
    { role: 'user', content: 'read a' },
    { role: 'assistant', content: '', reasoning_content: 'Read it first.', tool_calls: [call('functions.read:0')] },
    { role: 'tool', tool_call_id: 'functions.read:0', content: 'ok' },
    { role: 'assistant', content: 'Done.' },
  ],
};
const brokenFile = file('broken.json', JSON.stringify(broken));
const healthyFile = file('healthy.json', JSON.stringify(healthy));

async function lint(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['lint', ...argv], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('lint --request (in-process)', () => {
  test('a broken history: exit 1, one block per rule with its location and the provider error', async () => {
    const r = await lint('--request', brokenFile);
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(
      r.out,
      /^broken\.json \(openai-chat request for moonshotai\/kimi-k2\.5, 4 messages\): Kimi K2 \(from the model id\), 2 errors$/m,
    );
    assert.match(r.out, /^error +history-reasoning-missing +request\.messages\[1\]$/m);
    assert.match(r.out, /^error +history-tool-order +request\.messages\[3\]$/m);
    assert.match(r.out, /thinking is enabled but reasoning_content is missing in assistant tool call message at index 1/);
  });

  test('a healthy history: exit 0, no findings', async () => {
    const r = await lint('--request', healthyFile);
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /: Kimi K2 \(from the model id\), no findings$/m);
  });

  test('--json prints the documented shape; --family and --model pick the family', async () => {
    const r = await lint('--request', brokenFile, '--json');
    assert.equal(r.code, 1);
    const j = JSON.parse(r.out) as Record<string, unknown> & {
      findings: { rule: string; severity: string; message: string; location: string }[];
    };
    assert.deepEqual(Object.keys(j), ['protocol', 'model', 'family', 'familySource', 'messages', 'findings']);
    assert.equal(j.protocol, 'openai-chat');
    assert.equal(j.family, 'kimi-k2');
    assert.equal(j.messages, 4);
    assert.deepEqual(
      j.findings.map((f) => [f.rule, f.severity, f.location]),
      [
        ['history-reasoning-missing', 'error', 'request.messages[1]'],
        ['history-tool-order', 'error', 'request.messages[3]'],
      ],
    );
    const unnamed = file('unnamed.json', JSON.stringify({ ...broken, model: undefined }));
    const none = JSON.parse((await lint('--request', unnamed, '--json')).out) as { family: unknown; findings: { rule: string }[] };
    assert.equal(none.family, null);
    assert.deepEqual(
      none.findings.map((f) => f.rule),
      ['history-tool-order'],
      'without a family only the protocol rules speak',
    );
    const given = JSON.parse((await lint('--request', unnamed, '--json', '--model', 'kimi-k2.5')).out) as {
      familySource: string;
      findings: unknown[];
    };
    assert.equal(given.familySource, 'model-id');
    assert.equal(given.findings.length, 2);
  });

  test('bad input: a clear one-line error and exit 2', async () => {
    const missing = await lint('--request', join(dir, 'nope.json'));
    assert.equal(missing.code, 2);
    assert.match(missing.err, /nope\.json: no such file/);
    const notJson = await lint('--request', file('text.json', 'hello'));
    assert.equal(notJson.code, 2);
    assert.match(notJson.err, /text\.json is not valid JSON/);
    const family = await lint('--request', brokenFile, '--family', 'nope');
    assert.equal(family.code, 2);
    assert.match(family.err, /--family must be one of/);
  });
});

describe('lint --request - (built binary, stdin)', () => {
  const bin = join(repoRoot, 'bin', 'tokenscope.js');
  const built = join(repoRoot, 'dist', 'cli.js');
  const fresh = existsSync(built) && statSync(built).mtimeMs >= statSync(join(repoRoot, 'src/cli/commands/lint-request.ts')).mtimeMs;
  const run = (input: string, ...argv: string[]) =>
    spawnSync(process.execPath, [bin, 'lint', ...argv], { input, encoding: 'utf8', timeout: 60_000 });

  test('reads the request body from stdin: text, --json, and errors', (t) => {
    if (!fresh) return t.skip('dist/cli.js is missing or older than lint-request.ts: run `npm run build` first');
    const text = run(JSON.stringify(broken), '--request', '-');
    assert.equal(text.status, 1, text.stderr);
    assert.match(
      text.stdout,
      /^stdin \(openai-chat request for moonshotai\/kimi-k2\.5, 4 messages\): Kimi K2 \(from the model id\), 2 errors$/m,
    );
    const json = run(JSON.stringify(healthy), '--request', '-', '--json');
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual((JSON.parse(json.stdout) as { findings: unknown[] }).findings, []);
    const empty = run('', '--request', '-');
    assert.equal(empty.status, 2);
    assert.match(empty.stderr, /stdin is empty/);
    const response = run(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      }),
      '--request',
      '-',
    );
    assert.equal(response.status, 2);
    assert.match(response.stderr, /stdin is a response body/);
  });
});

/** The CLI around the proxy: `serve` (a real child process), `captures`, `show`, `agents`. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { main } from '../../../src/cli/main';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { exited, serveChild, tempDir, waitFor } from '../../unit/proxy/local-upstream';

function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  return main(argv, { out: (t) => (out += t.endsWith('\n') ? t : t + '\n'), err: (t) => (err += t.endsWith('\n') ? t : t + '\n') }).then(
    (code) => ({ code, out, err }),
  );
}

test('serve prints one line per exchange and each error finding; captures and show read the store', async () => {
  const emu = await startOpenRouterEmulator();
  const data = tempDir();
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, '--openrouter-url', `${emu.url}/api`]);
  try {
    const client = new OpenAI({ baseURL: `${s.url}/openrouter/v1`, apiKey: 'sk-or-v1-clitest0123456789abcdef' });
    for (const only of ['chutes', 'fireworks']) {
      const params: OpenAI.ChatCompletionCreateParamsStreaming & { provider: object } = {
        model: 'moonshotai/kimi-k2-0905',
        stream: true,
        messages: [{ role: 'user', content: 'List the files.' }],
        tools: [
          { type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } },
        ],
        provider: { only: [only] },
      };
      for await (const _ of await client.chat.completions.create(params)) void _;
    }
    await waitFor(() => (s.output().match(/moonshotai\/kimi-k2-0905 via /g) ?? []).length === 2, 'two exchange lines', 15_000);
    const out = s.output();
    assert.match(out, /openai-sdk {2}moonshotai\/kimi-k2-0905 via Chutes {2}200 stop {2}\d+ findings? \(\d+ errors?/);
    assert.match(out, /\n {4}error section-unclosed \(/, 'the error finding is printed under its exchange');
    assert.match(out, /via Fireworks {2}200 tool_calls {2}no findings/);
    s.child.kill('SIGTERM');
    await exited(s.child);
    assert.equal(s.child.exitCode, 0, s.output());
    const list = await cli(['captures', '--data-dir', data.dir]);
    assert.equal(list.code, 0);
    const lines = list.out.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[1], /via Chutes {2}200 stop {2}\d+ findings/);
    const json = JSON.parse((await cli(['captures', '--data-dir', data.dir, '--json'])).out);
    const leaky = json.find((x: { servedProvider?: string }) => x.servedProvider === 'Chutes');

    const shown = await cli(['show', leaky.id.slice(0, 11), '--data-dir', data.dir]);
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, /provider +Chutes, generation gen-/);
    assert.match(shown.out, /pin +chutes \(honoured\)/);
    assert.match(shown.out, /\n {2}error section-unclosed/);
    const shownJson = JSON.parse((await cli(['show', leaky.id, '--data-dir', data.dir, '--json'])).out);
    assert.ok(shownJson.findings.some((f: { rule: string }) => f.rule === 'section-unclosed'));
    assert.ok(!JSON.stringify(shownJson).includes('clitest'), 'no key in the output');

    const missing = await cli(['show', 'zzzz', '--data-dir', data.dir]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /^tokenscope show: no capture with id "zzzz"/);
  } finally {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await emu.close();
    data.remove();
  }
});

test('agents prints a launch line per agent for the given port', async () => {
  const r = await cli(['agents', '--port', '9000']);
  assert.equal(r.code, 0);
  assert.match(
    r.out,
    /^OpenCode {2}\(chat-completions, base URL http:\/\/127\.0\.0\.1:9000\/openrouter\/v1\)\n {2}OPENCODE_CONFIG_CONTENT=/m,
  );
  assert.match(r.out, /ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:9000\/openrouter .*claude/);
  assert.match(r.out, /codex -c 'model_provider="tokenscope"'/);
  assert.match(r.out, /Base URL: http:\/\/127\.0\.0\.1:9000\/openrouter\/v1/);
  const json = JSON.parse((await cli(['agents', '--json', '--route', 'sglang'])).out);
  assert.equal(json.length, 11);
  assert.match(
    r.out,
    /^Kilo CLI {2}\(chat-completions, base URL http:\/\/127\.0\.0\.1:9000\/openrouter\/v1\)\n {2}KILO_CONFIG_CONTENT='\{.*\}' kilo$/m,
  );
  assert.equal(json[0].baseUrl, 'http://127.0.0.1:8719/sglang/v1');
  assert.match((await cli(['agents', '--port', 'x'])).err, /--port must be a number/);
});

test('serve refuses a taken port with one line and exit code 2', async () => {
  const data = tempDir();
  const first = await serveChild(['--port', '0', '--data-dir', data.dir]);
  try {
    const port = new URL(first.url).port;
    const r = await cli(['serve', '--port', port, '--data-dir', data.dir]);
    assert.equal(r.code, 2);
    assert.equal(
      r.err.trim(),
      `tokenscope serve: port ${port} on 127.0.0.1 is already in use (another Tokenscope?); choose another with --port`,
    );
  } finally {
    first.child.kill('SIGTERM');
    await exited(first.child);
    data.remove();
  }
});

test('serve --openrouter-url takes the API root as the other commands do (…/api/v1), not only …/api', async () => {
  const emu = await startOpenRouterEmulator({ latencyMs: 0, chunkDelayMs: 0 });
  const data = tempDir();
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, '--openrouter-url', `${emu.url}/api/v1/`]);
  try {
    const res = await fetch(`${s.url}/openrouter/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-or-v1-clitest0123456789abcdef', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'moonshotai/kimi-k2-0905',
        messages: [{ role: 'user', content: 'hi' }],
        provider: { only: ['fireworks'] },
      }),
    });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual(
      emu.requests.map((r) => r.path),
      ['/api/v1/chat/completions'],
    );
  } finally {
    s.child.kill('SIGKILL');
    await exited(s.child);
    await emu.close();
    data.remove();
  }
});

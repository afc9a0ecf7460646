/**
 * Repair mode with the real OpenCode CLI against a leaky Kimi provider (the emulator's `leak-content`: the call is in
 * `content`, its section end missing, finish `stop`). Without repair OpenCode prints the markup and writes nothing;
 * through `tokenscope serve --repair` it runs the write tool and the file exists, and the capture keeps both the
 * upstream's bytes and the bytes delivered.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { openCodeMissing, runOpenCode } from '../../helpers/agent-cli';
import { exited, serveChild, tempDir } from '../../unit/proxy/local-upstream';

const KEY = 'sk-or-v1-repairtest0123456789abcdef';

async function runThrough(repair: boolean) {
  const home = tempDir('tokenscope-opencode-repair-');
  const data = tempDir('tokenscope-repair-data-');
  const target = join(home.dir, 'hello.txt');
  const emu = await startOpenRouterEmulator({
    providers: [{ slug: 'chutes', name: 'Chutes', personality: 'leak-content' }],
    call: { tool: 'write', arguments: { filePath: target, content: 'written through repair\n' } },
  });
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, '--openrouter-url', `${emu.url}/api`, ...(repair ? ['--repair'] : [])]);
  try {
    const { code, out } = await runOpenCode({
      proxyUrl: s.url,
      home: home.dir,
      key: KEY,
      prompt: 'Write hello.txt.',
      // The write tool asks for permission by default; a headless run allows it.
      extraEnv: { OPENCODE_PERMISSION: JSON.stringify({ edit: 'allow', bash: 'allow' }) },
    });
    s.child.kill('SIGTERM');
    await exited(s.child);
    const store = await openStore(data.dir, { analyze: false });
    const withTools = store.list().filter((x) => /"tools"/.test(store.get(x.id)?.requestBody ?? ''));
    const first = withTools.at(-1);
    const result = {
      code,
      out,
      written: existsSync(target) ? readFileSync(target, 'utf8') : undefined,
      exchange: first && store.get(first.id),
      upstream: first && Buffer.from(store.readResponse(first.id)!.bytes).toString('utf8'),
      delivered: first && store.readDelivered(first.id),
      turns: emu.requests.filter((r) => r.path.endsWith('/chat/completions')).length,
    };
    await store.close();
    return result;
  } finally {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await emu.close();
    home.remove();
    data.remove();
  }
}

/** Both runs at once: each mostly waits on OpenCode's start-up. */
let runs: Promise<Awaited<ReturnType<typeof runThrough>>[]> | undefined;
const both = () => (runs ??= Promise.all([runThrough(false), runThrough(true)]));

test('OpenCode through serve without --repair: the leaked markup is printed and nothing is written', async (t) => {
  const missing = openCodeMissing();
  if (missing) return t.skip(missing);
  const r = (await both())[0];
  assert.equal(r.code, 0, r.out.slice(-2000));
  assert.match(r.out, /tool_calls_section_begin/, 'OpenCode printed the markup');
  assert.equal(r.written, undefined, 'no file was written');
  assert.equal(r.exchange?.repair, undefined);
  assert.equal(r.delivered, undefined);
});

test('OpenCode through serve --repair: the write tool runs, the file exists, the capture holds both byte streams', async (t) => {
  const missing = openCodeMissing();
  if (missing) return t.skip(missing);
  const r = (await both())[1];
  assert.equal(r.code, 0, r.out.slice(-2000));
  assert.equal(r.written, 'written through repair\n', r.out.slice(-2000));
  assert.doesNotMatch(r.out, /tool_calls_section_begin|tool_call_begin/, 'no markup reached the user');
  assert.ok(r.turns >= 2, 'OpenCode sent the tool result back for a second turn');
  const x = r.exchange!;
  assert.equal(x.repair?.calls.length, 1, JSON.stringify(x.repair));
  assert.deepEqual(
    { name: x.repair!.calls[0].name, id: x.repair!.calls[0].id, status: x.repair!.calls[0].status },
    { name: 'write', id: 'functions.write:0', status: 'delivered' },
  );
  assert.deepEqual(x.repair!.finishReason, { upstream: 'stop', delivered: 'tool_calls' });
  assert.match(r.upstream!, /<\|tool_calls_section_begin\|>/, 'the capture body is the upstream bytes');
  const delivered = Buffer.from(r.delivered!).toString('utf8');
  assert.doesNotMatch(delivered, /tool_calls_section_begin/);
  assert.match(delivered, /"tool_calls":\[\{"index":0,"id":"functions\.write:0","type":"function","function":\{"name":"write","arguments":""\}\}\]/);
  assert.match(delivered, /"finish_reason":"tool_calls"/);
});

/**
 * Repair mode with the real OpenCode CLI against a leaky Kimi provider (the emulator's `leak-content`: the call is in
 * `content`, its section end missing, finish `stop`). Without repair OpenCode prints the markup and writes nothing;
 * through `tokenscope serve --repair` it runs the write tool and the file exists, and the capture keeps both the
 * upstream's bytes and the bytes delivered.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { openCodeMissing, runOpenCode } from '../../helpers/agent-cli';
import { runAgentThroughServe } from '../../helpers/agent-repair';

const KEY = 'sk-or-v1-repairtest0123456789abcdef';

function runThrough(repair: boolean) {
  return runAgentThroughServe({
    name: 'opencode',
    repair,
    upstream: (target) =>
      startOpenRouterEmulator({
        providers: [{ slug: 'chutes', name: 'Chutes', personality: 'leak-content' }],
        call: { tool: 'write', arguments: { filePath: target, content: 'written through repair\n' } },
      }),
    serveArgs: (emu) => ['--openrouter-url', `${emu.url}/api`],
    agent: (proxyUrl, home) =>
      runOpenCode({
        proxyUrl,
        home,
        key: KEY,
        prompt: 'Write hello.txt.',
        // The write tool asks for permission by default; a headless run allows it.
        extraEnv: { OPENCODE_PERMISSION: JSON.stringify({ edit: 'allow', bash: 'allow' }) },
      }),
    isTurn: (_x, body) => /"tools"/.test(body),
    more: (emu) => ({ turns: emu.requests.filter((r) => r.path.endsWith('/chat/completions')).length }),
  });
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
  assert.match(
    delivered,
    /"tool_calls":\[\{"index":0,"id":"functions\.write:0","type":"function","function":\{"name":"write","arguments":""\}\}\]/,
  );
  assert.match(delivered, /"finish_reason":"tool_calls"/);
});

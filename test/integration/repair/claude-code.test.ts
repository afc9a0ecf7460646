/**
 * Repair mode with the real Claude Code CLI (npm `@anthropic-ai/claude-code`, `claude -p`) against an Anthropic-
 * compatible provider that leaks Kimi K2 markup for a Write call into a text block (../../fixtures/anthropic-leaky-
 * upstream.ts). Without repair Claude Code prints the markup and writes nothing; through `tokenscope serve --repair` it
 * receives a `tool_use` block, runs Write, the file exists, and the capture keeps the upstream's bytes and the bytes
 * delivered. Offline: the upstream is on 127.0.0.1, the key is fake, Claude Code's other traffic is switched off
 * (shared reference agents.md §2.10).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import historyKimiIds from '../../../src/core/checks/history-kimi-ids';
import { normalizeRequest } from '../../../src/core/wire/request';
import { response, run } from '../../unit/checks/helpers';
import { parseResponseBody } from '../../../src/core/wire/index';
import { agentRecipe } from '../../../src/core/agents/recipes';
import { FINAL_TEXT, startAnthropicLeakyUpstream } from '../../fixtures/anthropic-leaky-upstream';
import { runCli } from '../../helpers/agent-cli';
import { repoRoot } from '../../helpers/shared';
import { runAgentThroughServe } from '../../helpers/agent-repair';

const KEY = 'sk-ant-api03-repairtest0123456789abcdefghij';
const bin = join(repoRoot, 'node_modules', '.bin', 'claude');
const CONTENT = 'written through repair\n';

function missing(t: TestContext): boolean {
  if (existsSync(bin)) return false;
  t.skip(
    `@anthropic-ai/claude-code is not installed (npm devDependency; its native binary exists for ${process.platform}-${process.arch}?)`,
  );
  return true;
}

function runThrough(repair: boolean, cut = false) {
  return runAgentThroughServe({
    name: 'claude',
    repair,
    upstream: (target) => startAnthropicLeakyUpstream({ name: 'Write', arguments: { file_path: target, content: CONTENT } }, { cut }),
    serveArgs: (up) => ['--anthropic-url', up.url],
    agent: (proxyUrl, home) => {
      const recipe = agentRecipe('claude-code', { proxyUrl, route: 'anthropic', model: 'moonshotai/kimi-k2-0905' });
      assert.equal(recipe.launch.kind, 'terminal');
      const launch = recipe.launch as Extract<typeof recipe.launch, { kind: 'terminal' }>;
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        ...launch.env,
        ...Object.fromEntries(launch.secrets.map((x) => [x.env, KEY])),
        DISABLE_TELEMETRY: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
      };
      // acceptEdits: Write runs without asking (a headless run cannot answer).
      return runCli(bin, [...launch.args, '-p', 'Create hello.txt', '--permission-mode', 'acceptEdits'], env, home);
    },
    isTurn: (_x, body) => /"tools"/.test(body) && !/"tool_result"/.test(body),
    more: (up) => ({ messages: up.requests.filter((r) => r.path.endsWith('/messages')), leaked: up.leaked }),
  });
}

/** The runs at once: each mostly waits on Claude Code's start-up. */
let runs: Promise<Awaited<ReturnType<typeof runThrough>>[]> | undefined;
const all = () => (runs ??= Promise.all([runThrough(false), runThrough(true), runThrough(true, true)]));

test('Claude Code through serve without --repair: the leaked markup is printed and nothing is written', async (t) => {
  if (missing(t)) return;
  const r = (await all())[0];
  assert.equal(r.code, 0, r.out.slice(-2000));
  assert.match(r.out, /tool_calls_section_begin/, 'Claude Code printed the markup as its answer');
  assert.equal(r.written, undefined, 'no file was written');
  assert.equal(r.messages.filter((m) => JSON.stringify(m.body?.messages ?? []).includes('tool_result')).length, 0, 'no tool ran');
  assert.ok(r.exchange, 'the turn was captured');
  assert.equal(r.exchange!.repair, undefined);
  assert.equal(r.delivered, undefined);
});

test('Claude Code through serve --repair: Write runs from the leaked call, the file exists, the capture holds both byte streams', async (t) => {
  if (missing(t)) return;
  const r = (await all())[1];
  assert.equal(r.code, 0, r.out.slice(-2000));
  assert.equal(r.written, CONTENT, r.out.slice(-2000));
  assert.doesNotMatch(r.out, /tool_calls_section_begin|tool_call_begin/, 'no markup reached the user');
  assert.ok(r.out.includes(FINAL_TEXT), 'Claude Code sent the tool result back and printed the final answer');
  const back = r.messages.find((m) => JSON.stringify(m.body?.messages ?? []).includes('tool_result'));
  assert.ok(back, 'a second turn carries the tool result');
  const history = JSON.stringify(back!.body.messages);
  // Delivered as Anthropic's API accepts an id (^[a-zA-Z0-9_-]+$), the Kimi numbering kept.
  assert.match(
    history,
    /"type":"tool_use","id":"functions_Write_0","name":"Write"/,
    'the assistant turn sent back holds the tool_use block',
  );
  assert.match(history, /"tool_use_id":"functions_Write_0"/);
  // The request-side Kimi id rule reads the id Claude Code sent back as Kimi's numbering.
  const next = normalizeRequest(JSON.stringify(back!.body), { path: '/v1/messages' });
  assert.deepEqual(run(historyKimiIds, { response: response({ message: { content: 'ok' } }), request: next }).findings, []);
  assert.doesNotMatch(history, /tool_call_begin/, 'the markup is not sent back to the model');
  const x = r.exchange!;
  assert.deepEqual(
    x.repair?.calls.map((c) => ({ name: c.name, id: c.id, status: c.status, family: c.family })),
    [{ name: 'Write', id: 'functions_Write_0', status: 'delivered', family: 'kimi-k2' }],
    JSON.stringify(x.repair),
  );
  assert.deepEqual(x.repair!.finishReason, { upstream: 'end_turn', delivered: 'tool_use' });
  const upstream = parseResponseBody(Buffer.from(r.upstream!), { path: '/v1/messages', contentType: 'text/event-stream' });
  assert.equal(upstream.message.content, r.leaked, 'the capture body is the upstream bytes');
  assert.deepEqual(upstream.message.toolCalls, []);
  const delivered = Buffer.from(r.delivered!).toString('utf8');
  assert.doesNotMatch(delivered, /tool_calls_section_begin|tool_call_begin/);
  assert.match(delivered, /"content_block":\{"type":"tool_use","id":"functions_Write_0","name":"Write","input":\{\}\}/);
  assert.match(delivered, /"stop_reason":"tool_use"/);
});

test('Claude Code through serve --repair, the call cut inside its arguments: no tool runs, the turn ends as an API error', async (t) => {
  if (missing(t)) return;
  const r = (await all())[2];
  assert.notEqual(r.code, 0, 'Claude Code reports the failed turn');
  assert.match(r.out, /API Error/, r.out.slice(-2000));
  assert.equal(r.written, undefined, 'no file was written');
  assert.doesNotMatch(r.out, /tool_calls_section_begin|tool_call_begin/, 'no markup reached the user');
  assert.equal(r.messages.filter((m) => JSON.stringify(m.body?.messages ?? []).includes('tool_result')).length, 0, 'no tool ran');
  // Claude Code retries a turn that failed mid-stream a few times, then gives up.
  assert.ok(r.messages.length >= 1 && r.messages.length <= 12, `${r.messages.length} requests`);
  const x = r.exchange!;
  assert.deepEqual(
    x.repair?.calls.map((c) => [c.name, c.status]),
    [['Write', 'withheld']],
    JSON.stringify(x.repair),
  );
  assert.deepEqual(x.repair!.finishReason, { upstream: 'end_turn', delivered: 'error' });
  const delivered = Buffer.from(r.delivered!).toString('utf8');
  assert.doesNotMatch(delivered, /"tool_use"/);
  assert.match(delivered, /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
});

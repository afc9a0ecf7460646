/**
 * Repair mode with the real Codex CLI (npm `@openai/codex`, `codex exec`, Responses API) against a Responses upstream
 * that leaks Kimi K2 markup for a shell call writing a file into the message's `output_text`
 * (../../fixtures/responses-leaky-upstream.ts). Without repair Codex prints the markup and writes nothing; through
 * `tokenscope serve --repair` it receives a `function_call` item, runs the command, the file exists, and the capture
 * keeps the upstream's bytes and the bytes delivered. A truncated call is never run. Offline: the upstream is on
 * 127.0.0.1, the key is fake, Codex launched as `tokenscope agents codex` says (shared reference agents.md §2.10).
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { agentRecipe, routeKeyEnv } from '../../../src/core/agents/recipes';
import { FINAL_TEXT, startResponsesLeakyUpstream } from '../../fixtures/responses-leaky-upstream';
import { runCli } from '../../helpers/agent-cli';
import { repoRoot } from '../../helpers/shared';
import { runAgentThroughServe } from '../../helpers/agent-repair';

const KEY = 'sk-proj-repairtest0123456789abcdefghij';
const bin = join(repoRoot, 'node_modules', '.bin', 'codex');
const CONTENT = 'written through repair';
const COMMAND = `printf '${CONTENT}\\n' > hello.txt`;

function missing(t: TestContext): boolean {
  if (existsSync(bin)) return false;
  t.skip(`@openai/codex is not installed (npm devDependency; its native binary exists for ${process.platform}-${process.arch}?)`);
  return true;
}

function runThrough(repair: boolean, opts: { cut?: boolean; bare?: boolean; incomplete?: boolean } = {}) {
  return runAgentThroughServe({
    name: 'codex',
    repair,
    upstream: () => startResponsesLeakyUpstream(COMMAND, opts),
    serveArgs: (up) => ['--openai-url', `${up.url}/v1`],
    agent: (proxyUrl, home) => {
      const recipe = agentRecipe('codex', { proxyUrl, route: 'openai', model: 'moonshotai/kimi-k2-0905' });
      assert.equal(recipe.launch.kind, 'terminal');
      const launch = recipe.launch as Extract<typeof recipe.launch, { kind: 'terminal' }>;
      // No approval prompts in a headless run; the command runs unsandboxed in the throwaway folder (a container may
      // lack the user namespaces Codex's sandbox needs).
      writeFileSync(
        join(home, 'config.toml'),
        [
          'approval_policy = "never"',
          'sandbox_mode = "danger-full-access"',
          'check_for_update_on_startup = false',
          '[analytics]',
          'enabled = false',
          '',
        ].join('\n'),
      );
      const env = { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, ...launch.env, [routeKeyEnv('openai')]: KEY };
      return runCli(bin, ['exec', '--skip-git-repo-check', ...launch.args, 'Create hello.txt'], env, home);
    },
    isTurn: (x, body) => x.path.endsWith('/responses') && !/"function_call_output"/.test(body),
    more: (up, store) => ({
      keyInCapture: store.list().some((x) => JSON.stringify(store.get(x.id)).includes(KEY)),
      toolResults: up.requests.filter(
        (r) => r.path.endsWith('/responses') && JSON.stringify(r.body ?? {}).includes('"function_call_output"'),
      ),
      leaked: up.leaked,
    }),
  });
}

/** The runs at once: each mostly waits on Codex's start-up. */
let runs: Promise<Awaited<ReturnType<typeof runThrough>>[]> | undefined;
const all = () =>
  (runs ??= Promise.all([
    runThrough(false),
    runThrough(true),
    runThrough(true, { cut: true }),
    runThrough(true, { bare: true, incomplete: true }),
  ]));

test('Codex through serve without --repair: the leaked markup is printed and nothing is written', async (t) => {
  if (missing(t)) return;
  const r = (await all())[0];
  assert.equal(r.code, 0, r.out.slice(-2000));
  assert.match(r.out, /tool_calls_section_begin/, 'Codex printed the markup');
  assert.equal(r.written, undefined, 'no file was written');
  assert.equal(r.toolResults.length, 0, 'no tool ran');
  assert.equal(r.exchange?.repair, undefined);
  assert.equal(r.delivered, undefined);
});

test('Codex through serve --repair: the shell call runs, the file exists, the capture holds both byte streams', async (t) => {
  if (missing(t)) return;
  const r = (await all())[1];
  assert.equal(r.code, 0, r.out.slice(-2000));
  assert.equal(r.written, `${CONTENT}\n`, r.out.slice(-2000));
  assert.doesNotMatch(r.out, /tool_calls_section_begin|tool_call_begin/, 'no markup reached the user');
  assert.ok(r.out.includes(FINAL_TEXT), 'Codex sent the tool output back and printed the final answer');
  assert.equal(r.toolResults.length, 1, 'one second turn carries the tool output');
  const callId = r.toolResults[0].body.input.find((i: any) => i.type === 'function_call_output').call_id;
  const x = r.exchange!;
  const name = x.repair?.calls[0]?.name;
  assert.equal(callId, `functions.${name}:0`, 'Codex answered the delivered call by its id');
  assert.deepEqual(
    x.repair?.calls.map((c) => c.status),
    ['delivered'],
    JSON.stringify(x.repair),
  );
  assert.equal(x.repair!.protocol, 'openai-responses');
  assert.equal(x.repair!.finishReason, undefined, 'the status stays completed');
  assert.equal(x.repair!.removedChars.content, r.leaked.length - 'I will create the file now.'.length);
  assert.match(r.upstream!, /<\|tool_calls_section_begin\|>/, 'the capture body is the upstream bytes');
  const delivered = Buffer.from(r.delivered!).toString('utf8');
  assert.doesNotMatch(delivered, /tool_calls_section_begin/);
  assert.match(
    delivered,
    new RegExp(
      `"type":"response\\.output_item\\.added","sequence_number":\\d+,"output_index":1,"item":\\{"id":"fc_[0-9a-f]+","type":"function_call","status":"in_progress","arguments":"","call_id":"functions\\.${name}:0","name":"${name}"\\}`,
    ),
  );
  assert.ok(!r.keyInCapture, 'the key is not in the capture');
});

test('Codex through serve --repair, the call cut inside its arguments: it is never run, the turn fails', async (t) => {
  if (missing(t)) return;
  const r = (await all())[2];
  assert.equal(r.written, undefined, r.out.slice(-2000));
  assert.equal(r.toolResults.length, 0, 'no tool ran');
  assert.doesNotMatch(r.out, /tool_call_begin/);
  assert.deepEqual(
    r.exchange?.repair?.calls.map((c) => c.status),
    ['withheld'],
  );
  assert.deepEqual(r.exchange?.repair?.finishReason, { upstream: 'completed', delivered: 'failed' });
  assert.match(Buffer.from(r.delivered!).toString('utf8'), /"type":"response\.failed"/);
});

test('Codex through serve --repair, a message of markup alone at max_output_tokens: the message is dropped, the call runs', async (t) => {
  if (missing(t)) return;
  const r = (await all())[3];
  assert.equal(r.code, 0, r.out.slice(-2000));
  assert.equal(r.written, `${CONTENT}\n`, r.out.slice(-2000));
  assert.ok(r.out.includes(FINAL_TEXT), 'Codex sent the tool output back and printed the final answer');
  assert.equal(r.toolResults.length, 1);
  // The next turn's input holds the call and its output, and no empty assistant message.
  const input: any[] = r.toolResults[0].body.input;
  assert.ok(!input.some((i) => i.type === 'message' && i.role === 'assistant'), JSON.stringify(input).slice(0, 2000));
  assert.deepEqual(r.exchange?.repair?.finishReason, { upstream: 'incomplete', delivered: 'completed' });
  const delivered = Buffer.from(r.delivered!).toString('utf8');
  assert.doesNotMatch(delivered, /"msg_leaky"|response\.incomplete/);
});

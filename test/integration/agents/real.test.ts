// The real agent CLIs (npm devDependencies), launched as `tokenscope agents` says, through the proxy against local
// EMULATED upstreams (test/fixtures), each in a throwaway home and work folder. Recipes: shared reference
// agents.md §2.10. Each is checked for its capture, agent name, session and findings.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { agentRecipe, routeKeyEnv, type AgentId, type TerminalLaunch } from '../../../src/core/agents/recipes';
import { agentSessionId } from '../../../src/core/proxy/session';
import { LEAKED_TEXT, startAgentUpstream } from '../../fixtures/agent-upstreams';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { runCli } from '../../helpers/agent-cli';
import { repoRoot } from '../../helpers/shared';
import { startRig, tempDir, type Rig } from '../../unit/proxy/local-upstream';

const KEY = 'sk-agenttest0123456789abcdefghij';
const PROMPT = 'Create a file named hello.py';

/** The CLI's launcher in node_modules/.bin, or a skip saying why it is not there. */
function binary(
  t: TestContext,
  name: string,
  pkg: string,
  why = `npm devDependency; its native binary exists for ${process.platform}-${process.arch}?`,
): string | undefined {
  const bin = join(repoRoot, 'node_modules', '.bin', name);
  if (existsSync(bin)) return bin;
  t.skip(`${pkg} is not installed (${why})`);
  return undefined;
}

function terminal(id: AgentId, rig: Rig, route: string, model?: string): TerminalLaunch {
  const r = agentRecipe(id, { proxyUrl: rig.proxy.url, route, model });
  assert.equal(r.launch.kind, 'terminal');
  return r.launch as TerminalLaunch;
}

/** Runs the CLI with a clean environment (no proxy variables: Qwen Code would route 127.0.0.1 through them). */
async function run(bin: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number | null; out: string }> {
  return runCli(bin, args, { PATH: process.env.PATH ?? '', HOME: cwd, ...env }, cwd);
}

function secrets(launch: TerminalLaunch): Record<string, string> {
  return Object.fromEntries(launch.secrets.map((s) => [s.env, KEY]));
}

function assertFlagged(rig: Rig, agent: string): void {
  const mine = rig.store.list().filter((x) => x.agent === agent);
  assert.ok(
    mine.length >= 1,
    `captures: ${rig.store
      .list()
      .map((x) => `${x.agent} ${x.path}`)
      .join(', ')}`,
  );
  const turn = mine.find((x) => x.summary?.rules.includes('section-unclosed'));
  assert.ok(turn, `a capture flags the open tool-call section: ${mine.map((x) => `${x.path} ${x.state} ${x.summary?.rules}`).join('; ')}`);
  assert.equal(turn.state, 'complete', turn.error);
  assert.ok(turn.summary!.rules.includes('markup-in-content'), turn.summary!.rules.join(', '));
  for (const x of mine) assert.ok(!JSON.stringify(rig.store.get(x.id)).includes(KEY), 'the key is not in the capture');
}

test('Claude Code (claude -p) through /anthropic: captured as claude-code, one session per x-claude-code-session-id, flagged', async (t) => {
  const bin = binary(t, 'claude', '@anthropic-ai/claude-code');
  if (!bin) return;
  const up = await startAgentUpstream();
  const rig = await startRig({ anthropic: up.url });
  const home = tempDir('tokenscope-claude-');
  try {
    const launch = terminal('claude-code', rig, 'anthropic');
    const env = {
      ...launch.env,
      ...secrets(launch),
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
    };
    const r = await run(bin, [...launch.args, '-p', PROMPT, '--permission-mode', 'acceptEdits'], env, home.dir);
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.ok(r.out.includes(LEAKED_TEXT), 'Claude Code printed the answer it was given');
    await rig.store.idle();
    assertFlagged(rig, 'claude-code');
    const sent = up.requests.find((q) => q.path.endsWith('/messages'))!;
    const header = sent.headers['x-claude-code-session-id'];
    assert.equal(typeof header, 'string', 'Claude Code sends its session id');
    const expected = agentSessionId({ 'x-claude-code-session-id': header }, 'claude-code');
    for (const x of rig.store.list()) assert.equal(x.sessionId, expected);
  } finally {
    await rig.close();
    await up.close();
    home.remove();
  }
});

test('Codex (codex exec, Responses) through /openai: closes on response.completed and the exchange is still complete', async (t) => {
  const bin = binary(t, 'codex', '@openai/codex');
  if (!bin) return;
  const up = await startAgentUpstream({ lingerMs: 5000 });
  const rig = await startRig({ openai: up.url });
  const home = tempDir('tokenscope-codex-');
  try {
    const launch = terminal('codex', rig, 'openai', 'gpt-5');
    writeFileSync(
      join(home.dir, 'config.toml'),
      [
        'approval_policy = "never"',
        'sandbox_mode = "workspace-write"',
        'check_for_update_on_startup = false',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n'),
    );
    // Codex reads the key from the variable its env_key names (the recipe's -c flags), not from `secrets`.
    const r = await run(
      bin,
      ['exec', '--skip-git-repo-check', ...launch.args, PROMPT],
      { ...launch.env, [routeKeyEnv('openai')]: KEY, CODEX_HOME: home.dir },
      home.dir,
    );
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.ok(r.out.includes(LEAKED_TEXT), 'Codex printed the answer it was given');
    assert.ok(up.closedAfterCompleted >= 1, 'Codex closed the connection right after response.completed');
    await rig.store.idle();
    assertFlagged(rig, 'codex');
    const sent = up.requests.find((q) => q.path.endsWith('/responses'))!;
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    const expected = agentSessionId({ 'session-id': sent.headers['session-id'] ?? sent.headers.session_id }, 'codex');
    assert.ok(expected, `Codex sends a session header: ${Object.keys(sent.headers).join(', ')}`);
    for (const x of rig.store.list()) assert.equal(x.sessionId, expected);
  } finally {
    await rig.close();
    await up.close();
    home.remove();
  }
});

test('Qwen Code (qwen -p) through /openrouter: captured as qwen-code, its requests in one session, flagged', async (t) => {
  const bin = binary(t, 'qwen', '@qwen-code/qwen-code');
  if (!bin) return;
  const emu = await startOpenRouterEmulator({ providers: [{ slug: 'chutes', name: 'Chutes', personality: 'leak-content' }] });
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  const home = tempDir('tokenscope-qwen-');
  try {
    const launch = terminal('qwen-code', rig, 'openrouter');
    mkdirSync(join(home.dir, '.qwen'));
    const settings = {
      security: { auth: { selectedType: 'openai' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    };
    writeFileSync(join(home.dir, '.qwen', 'settings.json'), JSON.stringify(settings));
    const r = await run(
      bin,
      [...launch.args, '--approval-mode', 'yolo', '-p', PROMPT],
      { ...launch.env, ...secrets(launch), QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' },
      home.dir,
    );
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.match(r.out, /tool_calls_section_begin/, 'Qwen Code printed the leaked markup it was given');
    await rig.store.idle();
    assertFlagged(rig, 'qwen-code');
    const sessions = new Set(rig.store.list().map((x) => x.sessionId));
    assert.equal(sessions.size, 1, 'no session header: the idle window keeps one run together');
  } finally {
    await rig.close();
    await emu.close();
    home.remove();
  }
});

test('Continue CLI (cn -p) through /openrouter, launched as the recipe says: captured as continue-cli, one session, flagged', async (t) => {
  const bin = binary(t, 'cn', '@continuedev/cli');
  if (!bin) return;
  const emu = await startOpenRouterEmulator({ providers: [{ slug: 'chutes', name: 'Chutes', personality: 'leak-content' }] });
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  const home = tempDir('tokenscope-continue-');
  try {
    const launch = terminal('continue-cli', rig, 'openrouter');
    assert.equal(launch.command, 'sh', 'the launch writes cn its config file, then starts it');
    assert.ok(!launch.shell.includes(KEY) && !launch.env.TOKENSCOPE_CONTINUE_CONFIG.includes(KEY));
    // `cn` from node_modules/.bin, as a global install would put it on PATH.
    const env = {
      ...launch.env,
      ...secrets(launch),
      PATH: `${join(repoRoot, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      TMPDIR: home.dir,
    };
    const r = await run(launch.command, [...launch.args, '-p', PROMPT, '--auto'], env, home.dir);
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.match(r.out, /tool_calls_section_begin/, 'Continue CLI printed the leaked markup it was given');
    await rig.store.idle();
    assertFlagged(rig, 'continue-cli');
    assert.equal(new Set(rig.store.list().map((x) => x.sessionId)).size, 1, 'no session header: the idle window keeps one run together');
  } finally {
    await rig.close();
    await emu.close();
    home.remove();
  }
});

test('Kilo CLI (kilo run) through /openrouter, launched as the recipe says: captured as kilo-cli, one session per its session header, flagged', async (t) => {
  // Not a devDependency: @kilocode/cli is 290 MB and takes 15 s of CPU per run here (35-55 s on this shared machine).
  // `npm i --no-save @kilocode/cli@7.7.7` (the newest whose linux-x64 binary is on the registry) runs this test.
  const bin = binary(
    t,
    'kilo',
    '@kilocode/cli',
    'not a devDependency: 290 MB and 15 s of CPU a run; `npm i --no-save @kilocode/cli@7.7.7` includes this test',
  );
  if (!bin) return;
  const emu = await startOpenRouterEmulator({ providers: [{ slug: 'chutes', name: 'Chutes', personality: 'leak-content' }] });
  const rig = await startRig({ openrouter: `${emu.url}/api` });
  const home = tempDir('tokenscope-kilo-');
  try {
    const launch = terminal('kilo-cli', rig, 'openrouter');
    assert.ok(!launch.shell.includes(KEY));
    const h = home.dir;
    const env = {
      ...launch.env,
      OPENROUTER_API_KEY: KEY,
      XDG_CONFIG_HOME: join(h, '.config'),
      XDG_DATA_HOME: join(h, '.local/share'),
      XDG_CACHE_HOME: join(h, '.cache'),
      XDG_STATE_HOME: join(h, '.local/state'),
      KILO_DISABLE_AUTOUPDATE: '1',
      // Its telemetry and model-list fetches fail at once instead of waiting on a network this machine lacks.
      HTTPS_PROXY: 'http://127.0.0.1:9',
      HTTP_PROXY: 'http://127.0.0.1:9',
      NO_PROXY: '127.0.0.1,localhost',
    };
    const r = await run(bin, [...launch.args, 'run', PROMPT], env, h);
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.match(r.out, /tool_calls_section_begin/, 'Kilo CLI printed the leaked markup it was given');
    for (const q of emu.requests) assert.equal(q.headers.authorization, `Bearer ${KEY}`);
    await rig.store.idle();
    assertFlagged(rig, 'kilo-cli');
    const expected = agentSessionId(emu.requests[0].headers, 'kilo-cli');
    assert.ok(expected, `Kilo CLI sends a session header: ${Object.keys(emu.requests[0].headers).join(', ')}`);
    for (const x of rig.store.list()) assert.equal(x.sessionId, expected);
  } finally {
    await rig.close();
    await emu.close();
    home.remove();
  }
});

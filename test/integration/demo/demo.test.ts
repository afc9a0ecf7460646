/**
 * `tokenscope demo` as a user runs it: the built binary (bin/tokenscope.js) in a real process, on a clean data dir.
 * A preload records every outgoing socket, so "nothing leaves the machine" is checked on the process itself.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliLines as cli } from '../../helpers/cli-main';
import { openStore } from '../../../src/core/capture/store';
import { DEMO_CASE_HEADER } from '../../../src/core/demo/cases';
import { DEMO_CASES, DEMO_PROVIDER, isDemoCapture } from '../../../src/core/demo/index';
import { repoRoot } from '../../helpers/shared';
import { exited, tempDir, waitFor } from '../../unit/proxy/local-upstream';

const BIN = join(repoRoot, 'bin', 'tokenscope.js');
const BUILT = join(repoRoot, 'dist', 'cli.js');
const PRELOAD = join(repoRoot, 'test', 'helpers', 'record-connections.cjs');
const OPENCODE = join(repoRoot, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode');

/** strace, when installed: it sees the connections of child processes too (an agent is no Node process). */
const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p));

function startDemo(args: string[], connectionLog: string, trace?: string): { child: ChildProcess; output: () => string } {
  const node = [process.execPath, '--require', PRELOAD, BIN, 'demo', ...args];
  const [cmd, ...argv] = trace ? [STRACE!, '-f', '-qq', '-e', 'trace=connect', '-o', trace, ...node] : node;
  const child = spawn(cmd, argv, {
    cwd: repoRoot,
    env: { ...process.env, TOKENSCOPE_CONNECTION_LOG: connectionLog, TOKENSCOPE_DATA_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: Ctrl+C goes to the whole group, as a terminal sends it (strace passes none on).
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, output: () => out };
}

/** The remote addresses the process connected to, from the preload's log. */
function connections(log: string): { host?: string; port?: number; path?: string }[] {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

test('demo on a clean data dir: the expected captures and findings, loopback only, a clean exit on SIGINT', async (t) => {
  if (!existsSync(BUILT)) return t.skip('dist/cli.js is not built (npm test builds it; or run npm run build)');
  const data = tempDir();
  const log = join(data.dir, 'connections.jsonl');
  const dataDir = join(data.dir, 'captures');
  // Claude Code speaks Anthropic Messages, which the demo upstream does not: the demo says so (or that it is absent).
  const run = startDemo(['--port', '0', '--data-dir', dataDir, '--agent', 'claude-code'], log);
  try {
    await waitFor(
      () => run.output().includes('Serving the demo until Ctrl+C.') || run.child.exitCode !== null,
      'the demo to be served',
      30_000,
    );
    const out = run.output();
    assert.equal(run.child.exitCode, null, out);
    assert.match(out, /Nothing leaves this machine and no key is needed\./);
    assert.match(
      out,
      /--agent claude-code: (claude-code is not installed \(not on PATH\); skipped|found .+, but the demo upstream speaks OpenAI Chat Completions only and claude-code does not; skipped)\./,
    );
    process.kill(-run.child.pid!, 'SIGINT');
    assert.equal(await exited(run.child), 0, run.output());
    assert.equal(run.child.signalCode, null, 'it exited by itself, not by the signal');

    // The store, read with its public API after the process is gone.
    const store = await openStore(dataDir);
    try {
      const all = store.list();
      assert.equal(all.length, DEMO_CASES.length, all.map((x) => x.id).join(', '));
      for (const c of DEMO_CASES) {
        const x = all.map((e) => store.get(e.id)!).find((e) => e.requestHeaders[DEMO_CASE_HEADER] === c.id);
        assert.ok(x, `a capture of ${c.id}`);
        assert.ok(isDemoCapture(x), c.id);
        assert.equal(x.route, 'demo');
        assert.equal(x.servedProvider, DEMO_PROVIDER);
        assert.equal(x.state, 'complete');
        assert.equal(x.status, 200);
        assert.match(x.upstreamUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions$/);
        assert.deepEqual([...new Set(x.summary?.rules)].sort(), [...c.expectedRules].sort(), `${c.id}: ${x.summary?.rules.join(', ')}`);
        assert.equal(x.summary?.family, 'kimi-k2');
        // What it printed names each capture with its rules.
        assert.ok(out.includes(`${x.id}  tokenscope-demo  moonshotai/kimi-k2-0905 via ${DEMO_PROVIDER}`), `${c.id} printed`);
      }
      const healthy = all.find((x) => x.summary?.rules.length === 0);
      assert.ok(healthy, 'the healthy call has no findings');
    } finally {
      await store.close();
    }

    // Every socket the process opened went to 127.0.0.1 (the proxy reaching the demo upstream, the replay reaching the proxy).
    // Connections are kept alive, so: at least the one to the proxy and the one on to the demo upstream.
    const seen = connections(log);
    const proxyPort = Number(/the capture proxy on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
    const ports = new Set(seen.map((c) => Number(c.port)));
    assert.ok(ports.has(proxyPort) && ports.size >= 2, `the proxy (${proxyPort}) and the upstream behind it, saw ${JSON.stringify(seen)}`);
    for (const c of seen) assert.equal(c.host, '127.0.0.1', JSON.stringify(c));

    // The commands it printed work as printed.
    const printed = (verb: string) => {
      const m = new RegExp(`node bin/tokenscope\\.js (${verb} \\S+(?: --format markdown)? --data-dir \\S+)`).exec(out);
      assert.ok(m, `a printed ${verb} command in:\n${out}`);
      return m[1].split(' ');
    };
    const shown = await cli(printed('show'));
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, /error section-unclosed/);
    const linted = await cli(printed('lint'));
    assert.equal(linted.code, 1, linted.out + linted.err);
    assert.match(linted.out, /args-invalid-json/);
    const exported = await cli(printed('export'));
    assert.equal(exported.code, 0, exported.err);
    assert.match(exported.out, /Demo \(local\)/);
  } finally {
    if (run.child.exitCode === null) process.kill(-run.child.pid!, 'SIGKILL');
    data.remove();
  }
});

test('demo --clear removes the demo captures and keeps the others', async () => {
  const data = tempDir();
  try {
    const store = await openStore(data.dir);
    const own = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/openrouter/v1/chat/completions',
      requestHeaders: {},
    });
    await own.finish({ error: 'test' });
    const demo = store.begin({
      route: 'demo',
      upstreamUrl: 'http://127.0.0.1:1/v1/chat/completions',
      method: 'POST',
      path: '/u/demo/v1/chat/completions',
      requestHeaders: {},
    });
    await demo.finish({ error: 'test' });
    await store.close();
    const r = await cli(['demo', '--clear', '--data-dir', data.dir]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /removed 1 demo capture from/);
    const after = await openStore(data.dir);
    assert.deepEqual(
      after.list().map((x) => x.id),
      [own.id],
    );
    await after.close();
  } finally {
    data.remove();
  }
});

test('demo refuses an unknown agent and stray arguments with a one-line error', async () => {
  const bad = await cli(['demo', '--agent', 'vim']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^tokenscope demo: --agent must be one of opencode, claude-code, codex or none, got "vim"\n$/);
  const stray = await cli(['demo', 'now']);
  assert.equal(stray.code, 2);
  assert.match(stray.err, /unexpected argument "now"/);
});

// One agent run (OpenCode is slow to start on a busy machine): with repair, which shows both the leak (in the capture)
// and the tool running. Without repair OpenCode prints the markup instead (test/integration/proxy/clients.test.ts).
test('demo --agent opencode --repair: the leaked call reaches OpenCode as a tool call, the tool runs, all on 127.0.0.1', async (t) => {
  if (!existsSync(BUILT)) return t.skip('dist/cli.js is not built (npm test builds it; or run npm run build)');
  if (!existsSync(OPENCODE))
    return t.skip(`the OpenCode CLI binary (npm opencode-linux-x64) is not installed on ${process.platform}-${process.arch}`);
  const data = tempDir();
  const dataDir = join(data.dir, 'captures');
  const log = join(data.dir, 'connections.jsonl');
  const trace = STRACE ? join(data.dir, 'strace.txt') : undefined;
  const run = startDemo(['--port', '0', '--data-dir', dataDir, '--agent', 'opencode', '--repair'], log, trace);
  try {
    await waitFor(
      () => run.output().includes('Serving the demo until Ctrl+C.') || run.child.exitCode !== null,
      'the agent run to end',
      150_000,
    );
    const out = run.output();
    assert.match(out, /Repair mode is on/);
    assert.match(
      out,
      /\n {4}repaired: 1 call delivered as tool_calls, \d+ chars of markup removed from content, finish_reason stop → tool_calls\n/,
    );
    assert.match(out, /opencode│ .*Read README\.md/, 'OpenCode ran its read tool');
    assert.doesNotMatch(out, /opencode│ .*<\|tool_calls_section_begin\|>/, 'and printed no markup');
    assert.match(out, /Repair mode delivered the leaked call to opencode as a tool call, so the tool ran/);
    assert.doesNotMatch(out, /\x1b/, 'no escape sequence from the agent reaches the terminal');
    // Under strace the child is strace itself: Ctrl+C to the group reaches the demo, and strace exits with its code.
    process.kill(-run.child.pid!, 'SIGINT');
    assert.equal(await exited(run.child), 0, run.output());
    const store = await openStore(dataDir);
    try {
      const repaired = store.list().filter((x) => x.agent === 'opencode' && x.repair);
      assert.equal(repaired.length, 1, 'one agent turn was repaired');
      // The capture keeps the upstream's bytes: its findings are those of the leak.
      assert.ok(repaired[0].summary?.rules.includes('section-unclosed'), repaired[0].summary?.rules.join(', '));
      const after = store.list().filter((x) => x.agent === 'opencode' && x.startedAt > repaired[0].startedAt);
      assert.ok(
        after.some((x) => /"role":"tool"/.test(store.get(x.id)?.requestBody ?? '')),
        'OpenCode sent the tool result back',
      );
      for (const x of store.list().filter((e) => e.agent === 'opencode'))
        assert.ok(isDemoCapture(x) && x.route === 'demo', JSON.stringify(x));
    } finally {
      await store.close();
    }
    for (const c of connections(log)) assert.equal(c.host, '127.0.0.1', JSON.stringify(c));
    // OpenCode is a child process the preload does not see: strace does, for every process of the tree.
    if (!trace) return t.diagnostic('strace is not installed: only the demo process itself was checked for loopback-only connections');
    const inet = readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => /connect\(.*AF_INET/.test(l));
    assert.ok(inet.length > 0, 'strace saw the connections');
    for (const l of inet) assert.match(l, /inet_addr\("127\.0\.0\.1"\)|inet_pton\(AF_INET6, "::1"/, l);
  } finally {
    if (run.child.exitCode === null) process.kill(-run.child.pid!, 'SIGKILL');
    data.remove();
  }
});

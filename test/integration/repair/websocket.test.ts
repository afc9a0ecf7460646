/**
 * Repair mode over the Responses API's WebSocket mode: a WebSocket upstream (../../fixtures/ws-upstream.ts) leaks a
 * Kimi K2 shell call as markup in the message's `output_text`. Through repair the client receives a `function_call`
 * item (sequence numbers in order, the markup gone), a truncated call ends the response as `response.failed`, the
 * capture keeps the upstream's events and the delivered ones, `serve` prints the repair and `show` reads it; without
 * repair the client gets the upstream's bytes unchanged. The real Codex CLI in WebSocket mode writes the file.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { WebSocket } from 'undici';
import { agentRecipe, routeKeyEnv, type TerminalLaunch } from '../../../src/core/agents/recipes';
import { openStore } from '../../../src/core/capture/store';
import { repairStage, type RepairSettings } from '../../../src/core/repair/stage';
import { FINAL_TEXT, kimiLeak, shellCall } from '../../fixtures/responses-leaky-upstream';
import { frame, responsesEvents, startWsUpstream, type WsConn, type WsUpstream } from '../../fixtures/ws-upstream';
import { runCli } from '../../helpers/agent-cli';
import { repoRoot } from '../../helpers/shared';
import { exited, serveChild, startRig, tempDir, waitFor, type Rig } from '../../unit/proxy/local-upstream';

const KEY = 'sk-proj-wsrepair0123456789abcdefghij';
const COMMAND = "printf 'over the websocket\\n' > hello.txt";
const TOOLS = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
];
const create = (extra: object = {}) =>
  JSON.stringify({
    type: 'response.create',
    model: 'moonshotai/kimi-k2-0905',
    input: 'create hello.txt',
    tools: TOOLS,
    stream: true,
    ...extra,
  });
const ON: RepairSettings = { enabled: true, truncated: 'withhold' };

const ranTool = (m: any) => Array.isArray(m?.input) && m.input.some((i: any) => i?.type === 'function_call_output');

/** Answers a response.create that offers tools with the leaked call (in 7-character deltas), else with FINAL_TEXT. */
function leaky(opts: { cut?: boolean; prose?: string } = {}) {
  return (msg: string, conn: WsConn) => {
    const m = JSON.parse(msg);
    if (m.type !== 'response.create') return;
    const leak = !ranTool(m) && Array.isArray(m.tools) && m.tools.length > 0;
    const text = leak
      ? `${opts.prose ?? ''}${kimiLeak(shellCall(m.tools, COMMAND), { cut: opts.cut, bare: opts.prose !== undefined })}`
      : FINAL_TEXT;
    const deltas: string[] = [];
    for (let i = 0; i < text.length; i += 7) deltas.push(text.slice(i, i + 7));
    // Each event as one frame, several events per write, and a ping among them.
    const frames = responsesEvents(text, { model: typeof m.model === 'string' ? m.model : undefined, deltas }).map((e) =>
      frame(1, JSON.stringify(e)),
    );
    frames.splice(5, 0, frame(9, 'hb'));
    for (let i = 0; i < frames.length; i += 3) conn.send(Buffer.concat(frames.slice(i, i + 3)));
  };
}

async function openWs(url: string, path = '/openai/v1/responses'): Promise<{ ws: WebSocket; messages: any[] }> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${path}`, {
    headers: { authorization: `Bearer ${KEY}`, 'user-agent': 'codex_cli_rs/0.171.0' },
  } as never);
  const messages: any[] = [];
  ws.onmessage = (e) => messages.push(JSON.parse(String(e.data)));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('the WebSocket did not open'));
  });
  return { ws, messages };
}

async function withRig(
  behaviour: Parameters<typeof startWsUpstream>[0],
  repair: RepairSettings | undefined,
  run: (rig: Rig, up: WsUpstream) => Promise<void>,
): Promise<void> {
  const up = await startWsUpstream(behaviour);
  const rig = await startRig({ openai: up.url }, {}, repair ? { responseStage: repairStage(() => repair) } : {});
  try {
    await run(rig, up);
  } finally {
    await rig.close();
    await up.close();
  }
}

const terminal = (m: any) => /^response\.(completed|failed|incomplete)$/.test(m.type);
const finished = (rig: Rig, n: number) =>
  waitFor(() => rig.store.list().length >= n && rig.store.list().every((x) => x.state !== 'streaming'), `${n} finished exchange(s)`);

test('WebSocket through repair: the leaked call arrives as a function_call item, sequence numbers in order; the capture keeps both streams', async () => {
  // A key the model streams in pieces (split over deltas) is masked in the delivered copy too.
  const prose = `Using ${KEY} I will create the file now.`;
  await withRig({ onText: leaky({ prose }) }, ON, async (rig, up) => {
    const { ws, messages } = await openWs(rig.proxy.url);
    ws.send(create());
    await waitFor(() => messages.some(terminal), 'the response');
    const types = messages.map((m) => m.type);
    assert.equal(types.at(-1), 'response.completed');
    assert.deepEqual(
      messages.map((m) => m.sequence_number),
      messages.map((_, i) => i),
      'sequence numbers run from 0 without a gap',
    );
    const added = messages.find((m) => m.type === 'response.output_item.added' && m.item.type === 'function_call');
    assert.ok(added, types.join(' '));
    assert.equal(added.output_index, 1);
    assert.equal(added.item.name, 'exec_command');
    const done = messages.find((m) => m.type === 'response.function_call_arguments.done');
    assert.deepEqual(JSON.parse(done.arguments), { cmd: COMMAND });
    const completed = messages.at(-1);
    assert.deepEqual(
      completed.response.output.map((o: any) => o.type),
      ['message', 'function_call'],
    );
    assert.equal(completed.response.output[0].content[0].text, prose.trim());
    assert.ok(!JSON.stringify(messages).includes('tool_call'), 'no markup reached the client');
    ws.close(1000);
    await finished(rig, 1);
    await rig.store.idle();

    const x = rig.store.get(rig.store.list()[0].id)!;
    assert.ok(x.websocket);
    assert.deepEqual(
      x.repair?.calls.map((c) => [c.name, c.status]),
      [['exec_command', 'delivered']],
    );
    assert.equal(x.repair?.protocol, 'openai-responses');
    const upstream = Buffer.from(rig.store.readResponse(x.id)!.bytes).toString('utf8');
    assert.match(upstream, /tool_calls_section_begin/, 'the body is the upstream events');
    assert.match(upstream, /: server ping/, 'the ping is in the capture');
    const delivered = Buffer.from(rig.store.readDelivered(x.id)!).toString('utf8');
    assert.doesNotMatch(delivered, /tool_calls_section_begin/);
    assert.match(delivered, /"type":"function_call"/);
    assert.ok(!delivered.includes(KEY) && !upstream.includes(KEY), 'the streamed key is masked in both copies');
    assert.ok(!JSON.stringify(x).includes(KEY));
    // The client got the key (it is the model's text): repair changes the markup only.
    assert.ok(completed.response.output[0].content[0].text.includes(KEY));
    assert.equal(up.conns[0].messages.length, 1, 'the client message reached the upstream once');
  });
});

test('WebSocket through repair: a call cut inside its arguments is withheld and the response fails', async () => {
  await withRig({ onText: leaky({ cut: true }) }, ON, async (rig) => {
    const { ws, messages } = await openWs(rig.proxy.url);
    ws.send(create());
    await waitFor(() => messages.some(terminal), 'the response');
    assert.equal(messages.at(-1).type, 'response.failed');
    assert.equal(messages.at(-1).response.status, 'failed');
    assert.ok(!messages.some((m) => m.item?.type === 'function_call'), 'no call delivered');
    assert.ok(!JSON.stringify(messages).includes('tool_call_begin'));
    ws.close(1000);
    await finished(rig, 1);
    const x = rig.store.get(rig.store.list()[0].id)!;
    assert.deepEqual(x.repair?.finishReason, { upstream: 'completed', delivered: 'failed' });
  });
});

test('WebSocket without repair (and for a model repair does not apply to): the client gets the upstream bytes unchanged', async () => {
  for (const repair of [undefined, { ...ON, models: ['someone/else'] }]) {
    await withRig({ onText: leaky() }, repair, async (rig, up) => {
      const { ws, messages } = await openWs(rig.proxy.url);
      ws.send(create());
      await waitFor(() => messages.some(terminal), 'the response');
      assert.ok(JSON.stringify(messages).includes('tool_calls_section_begin'), 'the markup passes');
      ws.close(1000);
      await finished(rig, 1);
      const x = rig.store.get(rig.store.list()[0].id)!;
      assert.equal(x.repair, undefined);
      assert.equal(rig.store.readDelivered(x.id), undefined);
      // Byte for byte: what the client read equals what the upstream sent (a raw client below).
      const c = await rawClient(rig);
      c.write(create());
      await waitFor(
        () => up.conns.length === 2 && up.conns[1].sent.length > 0 && c.after().length >= Buffer.concat(up.conns[1].sent).length,
        'the raw answer',
      );
      assert.ok(
        c.after().equals(Buffer.concat(up.conns[1].sent)),
        repair ? 'model not selected: byte-identical' : 'no repair: byte-identical',
      );
      c.socket.destroy();
    });
  }
});

test('WebSocket through repair: an upstream that breaks the frame protocol: the client gets a close 1002, the capture says so', async () => {
  const onText = (msg: string, conn: WsConn) => {
    if (JSON.parse(msg).type !== 'response.create') return;
    conn.send(Buffer.concat([frame(1, JSON.stringify(responsesEvents('hi')[0])), frame(3, 'reserved opcode')]));
  };
  await withRig({ onText }, ON, async (rig) => {
    const { ws, messages } = await openWs(rig.proxy.url);
    const closed = new Promise<number>((r) => ws.addEventListener('close', (e) => r((e as unknown as { code: number }).code)));
    ws.send(create());
    assert.equal(await closed, 1002);
    assert.deepEqual(
      messages.map((m) => m.type),
      ['response.created'],
    );
    await finished(rig, 1);
    const x = rig.store.get(rig.store.list()[0].id)!;
    assert.equal(x.state, 'incomplete');
    assert.match(
      Buffer.from(rig.store.readResponse(x.id)!.bytes).toString('utf8'),
      /: server frames unreadable from here: a frame has the reserved opcode 3/,
    );
  });
});

/** A WebSocket client on a raw socket, keeping every byte after the proxy's 101 head. */
async function rawClient(rig: Rig) {
  const { connect } = await import('node:net');
  const socket = connect(rig.proxy.port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(
    `GET /openai/v1/responses HTTP/1.1\r\nHost: 127.0.0.1:${rig.proxy.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${KEY}\r\n\r\n`,
  );
  let all = Buffer.alloc(0);
  socket.on('data', (d: Buffer) => (all = Buffer.concat([all, d])));
  await waitFor(() => all.includes('\r\n\r\n'), 'the response head');
  const end = all.indexOf('\r\n\r\n') + 4;
  return {
    socket,
    after: () => all.subarray(end),
    write: (text: string) => socket.write(frame(1, text, { mask: Buffer.from([1, 2, 3, 4]) })),
  };
}

test('serve --repair over WebSocket: serve prints the repair, show reads it, the client decodes only whole frames', async () => {
  const up = await startWsUpstream({ onText: leaky() });
  const data = tempDir('tokenscope-ws-repair-data-');
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, '--openai-url', `${up.url}/v1`, '--repair']);
  try {
    const { ws, messages } = await openWs(s.url);
    ws.send(create());
    await waitFor(() => messages.some(terminal), 'the response');
    assert.ok(messages.some((m) => m.item?.type === 'function_call'));
    ws.close(1000);
    await waitFor(() => /repaired: .*delivered as function_call items?/.test(s.output()), 'the repair line in serve output');
    s.child.kill('SIGTERM');
    await exited(s.child);
    const store = await openStore(data.dir, { analyze: false });
    const id = store.list()[0].id;
    await store.close();
    const { main } = await import('../../../src/cli/main');
    let out = '';
    const code = await main(['show', '--data-dir', data.dir, id], {
      out: (l: string) => void (out += `${l}\n`),
      err: (l: string) => void (out += `${l}\n`),
    } as never);
    assert.equal(code, 0, out);
    assert.match(out, /delivered as function_call item/, out);
  } finally {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await up.close();
    data.remove();
  }
});

test('the real Codex CLI in WebSocket mode through serve --repair runs the leaked call and writes the file', async (t) => {
  const bin = join(repoRoot, 'node_modules', '.bin', 'codex');
  if (!existsSync(bin)) return void t.skip('skipped: @openai/codex (npm devDependency) is not installed for this platform');
  const creates: any[] = [];
  const answer = leaky();
  const up = await startWsUpstream({ onText: (msg, conn) => (creates.push(JSON.parse(msg)), answer(msg, conn)) });
  const home = tempDir('tokenscope-codex-ws-repair-');
  const data = tempDir('tokenscope-codex-ws-repair-data-');
  const s = await serveChild(['--port', '0', '--data-dir', data.dir, '--openai-url', `${up.url}/v1`, '--repair']);
  try {
    const launch = agentRecipe('codex', { proxyUrl: s.url, route: 'openai', model: 'moonshotai/kimi-k2-0905' }).launch as TerminalLaunch;
    writeFileSync(
      join(home.dir, 'config.toml'),
      [
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        'check_for_update_on_startup = false',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n'),
    );
    const args = [
      'exec',
      '--skip-git-repo-check',
      ...launch.args,
      '-c',
      'model_providers.tokenscope.supports_websockets=true',
      '--enable',
      'responses_websockets',
      'Create hello.txt',
    ];
    const r = await runCli(
      bin,
      args,
      { PATH: process.env.PATH ?? '', HOME: home.dir, CODEX_HOME: home.dir, ...launch.env, [routeKeyEnv('openai')]: KEY },
      home.dir,
    );
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.ok(up.conns.length >= 1, 'Codex spoke WebSocket through the proxy');
    const target = join(home.dir, 'hello.txt');
    assert.equal(existsSync(target) ? readFileSync(target, 'utf8') : undefined, 'over the websocket\n', r.out.slice(-2000));
    assert.doesNotMatch(r.out, /tool_calls_section_begin|tool_call_begin/, 'no markup reached the user');
    assert.ok(r.out.includes(FINAL_TEXT), 'Codex sent the tool output back and printed the final answer');
    assert.ok(
      creates.some((m) => m.type === 'response.create' && ranTool(m)),
      'the tool output went back over the WebSocket',
    );
    await waitFor(() => /repaired: /.test(s.output()), 'the repair line');
  } finally {
    s.child.kill('SIGTERM');
    await exited(s.child);
    await up.close();
    home.remove();
    data.remove();
  }
});

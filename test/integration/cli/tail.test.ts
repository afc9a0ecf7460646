// `tokenscope tail` following a capture store that another store instance (the proxy's, in real use) writes: the
// last finished exchanges first, then each new one as it finishes with its error findings, --broken leaving clean
// ones out, an "in flight" line for a stream that goes quiet, control characters from the network escaped, and the
// data dir left exactly as it was.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { follow } from '../../../src/cli/commands/tail';
import { main } from '../../../src/cli/main';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { QuietStreams, type InFlight } from '../../../src/core/live/inflight';
import { brokenKimiCapture } from '../../fixtures/export/captures';

const root = mkdtempSync(join(tmpdir(), 'tokenscope-tail-'));
after(() => rmSync(root, { recursive: true, force: true }));
const enc = new TextEncoder();

async function writeBroken(store: CaptureStore, model = 'moonshotai/kimi-k2-0905') {
  const c = brokenKimiCapture({ startedAt: Date.now() });
  const x = c.exchange;
  const w = store.begin({
    route: x.route,
    upstreamUrl: x.upstreamUrl,
    method: x.method,
    path: x.path,
    requestHeaders: {},
    requestBody: x.requestBody!.replace('moonshotai/kimi-k2-0905', model),
    agent: 'opencode',
  });
  w.responseStarted(200, x.responseHeaders!);
  // The model id as the response names it (a JSON escape on the wire, a raw control character once parsed).
  const body = new TextDecoder().decode(c.responseBody).replaceAll('moonshotai/kimi-k2-0905', JSON.stringify(model).slice(1, -1));
  w.chunk(enc.encode(body));
  w.annotate({ requestModel: model });
  return w.finish();
}

async function writeClean(store: CaptureStore) {
  const w = store.begin({
    route: 'openrouter',
    upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
    method: 'POST',
    path: '/api/v1/chat/completions',
    requestHeaders: {},
    requestBody: '{"model":"z-ai/glm-4.6","messages":[]}',
    agent: 'opencode',
  });
  w.responseStarted(200, { 'content-type': 'application/json' });
  w.chunk(
    enc.encode(
      '{"id":"gen-1","model":"z-ai/glm-4.6","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}]}',
    ),
  );
  return w.finish();
}

// Generous: on a loaded machine a poll can wait seconds for a core; a check that holds returns at once.
const until = async (cond: () => boolean, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), 'timed out');
};

test('tail follows another writer: history first, then new exchanges, quiet streams, --broken', async () => {
  const dataDir = join(root, 'a');
  const writer = await openStore(dataDir);
  const lines: string[] = [];
  const io = { out: (t: string) => lines.push(t), err: (t: string) => lines.push(`ERR ${t}`) };
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  try {
    const old = await writeBroken(writer);
    const clean = await writeClean(writer);
    await writer.idle();
    running = follow(io, { dataDir, broken: true, last: 10, intervalMs: 50, quietAfterMs: 300, signal: ac.signal });
    await until(() => lines.some((l) => l.includes(old.id)));
    assert.ok(!lines.some((l) => l.includes(clean.id)), '--broken leaves the clean exchange out');
    assert.ok(
      lines.some((l) => /^ {4}error section-unclosed/.test(l)),
      'error findings under the line',
    );

    // A new broken exchange whose model id carries an escape sequence.
    const fresh = await writeBroken(writer, 'evil\u001b[2Jmodel');
    await until(() => lines.some((l) => l.includes(fresh.id)));
    const line = lines.find((l) => l.includes(fresh.id))!;
    assert.match(line, /evil\\x1b\[2Jmodel/);
    assert.ok(!lines.join('\n').includes('\u001b'), 'no raw control character reaches the terminal');

    // A stream that goes quiet.
    const w = writer.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/api/v1/chat/completions',
      requestHeaders: {},
      requestBody: '{"model":"moonshotai/kimi-k2.5","stream":true,"messages":[]}',
      agent: 'opencode',
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    w.chunk(enc.encode(': OPENROUTER PROCESSING\n\n'));
    await until(() => lines.some((l) => l.includes(w.id) && /in flight \d+ s, 25 B, no bytes for \d+ s/.test(l)));
    assert.equal(lines.filter((l) => l.includes(w.id)).length, 1, 'one line per silence');
    w.chunk(enc.encode('data: {"choices":[{"index":0,"delta":{"content":"<|tool_calls_section_begin|>"},"finish_reason":null}]}\n\n'));
    await w.finish({ error: 'the upstream went silent', incomplete: true });
    await until(() => lines.some((l) => l.includes(w.id) && /incomplete/.test(l)));
  } finally {
    ac.abort();
    await running;
    await writer.close();
  }
  assert.ok(!lines.some((l) => l.startsWith('ERR')), lines.join('\n'));
});

test('tail only reads: the data dir is left exactly as it was; -n limits the history', async () => {
  const dataDir = join(root, 'b');
  const writer = await openStore(dataDir);
  for (let i = 0; i < 3; i++) await writeClean(writer);
  await writer.close();
  const snapshot = () =>
    readdirSync(dataDir, { recursive: true })
      .map(String)
      .sort()
      .map((f) => `${f} ${statSync(join(dataDir, f)).mtimeMs} ${statSync(join(dataDir, f)).size}`);
  const before = snapshot();
  const lines: string[] = [];
  const ac = new AbortController();
  const running = follow(
    { out: (t) => lines.push(t), err: (t) => lines.push(t) },
    { dataDir, broken: false, last: 2, intervalMs: 30, quietAfterMs: 10_000, signal: ac.signal },
  );
  // The history is printed once it has been read (a fixed wait raced that on a loaded machine); then several more
  // polls pass, which must print nothing and write nothing.
  await until(() => lines.length >= 2);
  await new Promise((r) => setTimeout(r, 200));
  ac.abort();
  await running;
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.deepEqual(snapshot(), before);
});

test('quiet streams are reported once per silence, again as it lasts, and start over when bytes come', () => {
  const q = new QuietStreams(10_000);
  const f = (quietMs: number) => ({ exchange: { id: 'x1' }, quietMs }) as unknown as InFlight;
  assert.equal(q.due([f(5_000)]).length, 0);
  assert.equal(q.due([f(10_500)]).length, 1);
  assert.equal(q.due([f(15_000)]).length, 0);
  assert.equal(q.due([f(20_600)]).length, 1);
  assert.equal(q.due([f(1_000)]).length, 0);
  assert.equal(q.due([f(10_100)]).length, 1);
});

test('tail leaves no abort listener behind however many polls it makes, and Node warns of no listener leak', async () => {
  const dataDir = join(root, 'c');
  const writer = await openStore(dataDir);
  await writeClean(writer);
  await writer.close();
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  const ac = new AbortController();
  const counts: number[] = [];
  const POLLS = 40; // four times Node's default threshold of 10 listeners
  try {
    await follow(
      { out: () => undefined, err: () => undefined },
      {
        dataDir,
        broken: false,
        last: 1,
        intervalMs: 5,
        quietAfterMs: 10_000,
        signal: ac.signal,
        onPoll: (n) => {
          counts.push(getEventListeners(ac.signal, 'abort').length);
          if (n >= POLLS) ac.abort();
        },
      },
    );
    // A warning is emitted on the next tick.
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  assert.equal(counts.length, POLLS);
  assert.ok(
    counts.every((c) => c === 0),
    `abort listeners between polls: ${counts.join(',')}`,
  );
  assert.deepEqual(
    warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
    [],
  );
});

test('tail and captures say an exchange was repaired, as serve does', async () => {
  const dataDir = join(root, 'r');
  const writer = await openStore(dataDir);
  const lines: string[] = [];
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  try {
    const c = brokenKimiCapture({ startedAt: Date.now() });
    const x = c.exchange;
    const w = writer.begin({
      route: x.route,
      upstreamUrl: x.upstreamUrl,
      method: x.method,
      path: x.path,
      requestHeaders: {},
      requestBody: x.requestBody!,
      agent: 'opencode',
    });
    w.responseStarted(200, x.responseHeaders!);
    w.chunk(c.responseBody);
    w.annotate({
      repair: {
        protocol: 'openai-chat',
        truncated: 'withhold',
        calls: [
          { index: 0, id: 'functions.read:0', name: 'read', from: 'content', family: 'kimi-k2', status: 'delivered', argumentsChars: 20 },
        ],
        removedChars: { content: 120, reasoning: 0 },
        finishReason: { upstream: 'stop', delivered: 'tool_calls' },
      },
    });
    const repaired = await w.finish();
    await writer.idle();
    running = follow(
      { out: (t) => lines.push(t), err: (t) => lines.push(`ERR ${t}`) },
      { dataDir, broken: false, last: 10, intervalMs: 50, quietAfterMs: 10_000, signal: ac.signal },
    );
    await until(() => lines.some((l) => l.startsWith('    repaired: ')));
    const at = lines.findIndex((l) => l.includes(repaired.id));
    assert.ok(at >= 0, lines.join('\n'));
    assert.match(
      lines.slice(at + 1).join('\n'),
      /^ {4}repaired: 1 call delivered as tool_calls, 120 chars of markup removed from content, finish_reason stop → tool_calls$/m,
    );
    const listed: string[] = [];
    assert.equal(await main(['captures', '--data-dir', dataDir], { out: (t) => listed.push(t), err: (t) => listed.push(`ERR ${t}`) }), 0);
    assert.match(listed.join('\n'), new RegExp(`${repaired.id} .*  repaired$`, 'm'), 'the captures line marks it');
  } finally {
    ac.abort();
    await running;
    await writer.close();
  }
  assert.ok(!lines.some((l) => l.startsWith('ERR')), lines.join('\n'));
});

/**
 * A key the model streams a few characters per SSE event is masked in the stored body file when the stream ends:
 * same length, chunk timing unchanged, every event still valid JSON; and the bundle export then holds no key.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import { exportCaptures } from '../../../src/core/export/index';
import { containsSecret } from '../../../src/core/redact';
import { ruleInfo } from '../../../src/core/checks/index';
import { exchangeView } from '../../../src/extension/exchangeView';
import { tempDir } from '../proxy/local-upstream';

const KEY = 'sk-proj-AbCdEfGhIjKlMnOp0123456789';

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function chatSse(deltas: string[], field: 'content' | 'reasoning' | 'arguments' = 'content'): string {
  const ev = (d: string) =>
    field === 'arguments'
      ? { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: d } }] } }] }
      : { choices: [{ index: 0, delta: { [field]: d } }] };
  return deltas.map((d) => `data: ${JSON.stringify(ev(d))}\n\n`).join('') + 'data: [DONE]\n\n';
}

function anthropicSse(deltas: string[]): string {
  const evs = [
    { type: 'message_start', message: { id: 'm', role: 'assistant', content: [] } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...deltas.map((d) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: d } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_stop' },
  ];
  return evs.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

/** Every `data:` JSON event of an SSE body, parsed (throws when masking broke the JSON). */
function events(body: string): unknown[] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice('data: '.length)));
}

/** Joined text deltas of the parsed events (chat content/arguments or Anthropic text). */
function joined(evs: unknown[]): string {
  return evs
    .map((e) => {
      const x = e as {
        choices?: { delta: { content?: string; reasoning?: string; tool_calls?: { function: { arguments: string } }[] } }[];
        delta?: { text?: string };
      };
      const d = x.choices?.[0]?.delta;
      return d?.content ?? d?.reasoning ?? d?.tool_calls?.[0]?.function.arguments ?? x.delta?.text ?? '';
    })
    .join('');
}

/** Stores `body` as one response sent in one chunk per SSE event; returns what the store and the body file hold. */
async function record(body: string, use?: (dataDir: string, id: string) => Promise<void>) {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin({
      route: 'openai',
      upstreamUrl: 'https://api.openai.com/v1/chat/completions',
      method: 'POST',
      path: '/v1/chat/completions',
      requestHeaders: {},
      requestBody: '{"model":"m","stream":true}',
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    const sent = body.split(/(?<=\n\n)/).map((e) => Buffer.from(e));
    // As in repair mode: each piece goes to the client and is appended to the delivered copy in the same tick.
    w.delivering();
    for (const c of sent) w.chunk(c), w.deliver(c);
    const x = await w.finish();
    const res = store.readResponse(w.id)!;
    const delivered = Buffer.from(store.readDelivered(w.id)!);
    await store.close();
    await use?.(tmp.dir, w.id);
    const dir = join(tmp.dir, 'bodies');
    const files = readdirSync(dir).map((f) => readFileSync(join(dir, f)));
    return { x, bytes: Buffer.from(res.bytes), chunks: res.chunks, sent, files, delivered };
  } finally {
    tmp.remove();
  }
}

function sameTiming(chunks: { offset: number; length: number }[], sent: Buffer[]): void {
  let off = 0;
  assert.deepEqual(
    chunks.map((c) => [c.offset, c.length]),
    sent.map((s) => [off, ((off += s.length), s.length)]),
  );
}

for (const size of [2, 5, 1]) {
  test(`a key streamed ${size} character(s) per event is masked in the body file, same length and timing, valid JSON`, async () => {
    const text = `Your key is ${KEY}, keep it safe.`;
    const body = chatSse(pieces(text, size));
    const { x, bytes, chunks, sent, files, delivered } = await record(body);
    assert.equal(bytes.length, Buffer.byteLength(body));
    assert.ok(delivered.equals(bytes), 'the bytes delivered in repair mode are masked the same way');
    sameTiming(chunks, sent);
    for (const f of files) {
      assert.ok(!f.includes(KEY.slice(8)), 'the body file holds no run of the key');
      assert.ok(
        !containsSecret(joined(events(f.toString('utf8').replace(/^[\s\S]*?(?=data: )/, '')))),
        'the body file holds no key once its deltas are joined',
      );
    }
    const evs = events(bytes.toString('utf8'));
    assert.equal(evs.length, events(body).length);
    const out = joined(evs);
    assert.equal(out.length, text.length);
    assert.ok(!containsSecret(out), out);
    assert.ok(out.startsWith('Your key is [REDACTED:openai-key]'), out);
    assert.ok(out.endsWith(', keep it safe.'), out);
    assert.deepEqual(x.masked, { splitKeys: 1, labels: ['openai-key'], where: ['response chat:0:content', 'delivered chat:0:content'] });
  });
}

test('a key in streamed tool-call arguments with JSON escapes is masked inside the string values only', async () => {
  const args = JSON.stringify({ token: 'x', text: `é "${KEY}" \u0001` });
  // Escape some key characters as \u sequences: their 6 bytes become mask characters.
  const body = chatSse(pieces(args, 3), 'arguments').replace(/AbC/g, '\\u0041bC');
  assert.ok(body.includes('\\u0041bC'), 'the key is partly escaped on the wire');
  const { bytes, chunks, sent } = await record(body);
  sameTiming(chunks, sent);
  assert.equal(bytes.length, Buffer.byteLength(body));
  const out = joined(events(bytes.toString('utf8')));
  assert.ok(!containsSecret(out), out);
  assert.ok(out.startsWith('{"token":"x","text":"é \\"[REDACTED'), out);
  assert.ok(out.endsWith('\\" \\u0001"}'), out);
});

test('a clean stream is stored byte for byte', async () => {
  const body = chatSse(pieces('Nothing secret: risk-management-framework, sk- alone, café ✓', 3));
  const { x, bytes } = await record(body);
  assert.ok(bytes.equals(Buffer.from(body)));
  assert.equal(x.masked, undefined);
});

test('an Anthropic stream: a key split over text_delta events is masked the same way', async () => {
  const text = `here: ${KEY} done`;
  const body = anthropicSse(pieces(text, 4));
  const { bytes, chunks, sent, files } = await record(body);
  sameTiming(chunks, sent);
  assert.equal(bytes.length, Buffer.byteLength(body));
  for (const f of files) assert.ok(!f.includes(KEY.slice(8)));
  const out = joined(events(bytes.toString('utf8')));
  assert.equal(out.length, text.length);
  assert.ok(!containsSecret(out), out);
});

test('a Responses stream: a key split over output_text.delta events is masked the same way', async () => {
  const text = `key=${KEY};`;
  const evs = [
    { type: 'response.created', response: { id: 'r' } },
    ...pieces(text, 3).map((d) => ({ type: 'response.output_text.delta', item_id: 'i', output_index: 0, content_index: 0, delta: d })),
    { type: 'response.completed', response: { id: 'r' } },
  ];
  const body = evs.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
  const { bytes, chunks, sent } = await record(body);
  sameTiming(chunks, sent);
  assert.equal(bytes.length, Buffer.byteLength(body));
  const out = (events(bytes.toString('utf8')) as { delta?: string }[]).map((e) => e.delta ?? '').join('');
  assert.equal(out.length, text.length);
  assert.ok(!containsSecret(out), out);
  assert.ok(out.startsWith('key=[REDACTED:openai-key]') && out.endsWith(';'), out);
});

test('`export --format bundle` of such a capture writes a file without the key (and the HAR export too)', async () => {
  const body = chatSse(pieces(`Your key is ${KEY}.`, 2));
  const texts: string[] = [];
  await record(body, async (dataDir, id) => {
    const file = join(dataDir, 'out.json');
    let err = '';
    const code = await main(['export', id, '--format', 'bundle', '-o', file, '--data-dir', dataDir], {
      out: () => undefined,
      err: (t) => (err += t),
    });
    assert.equal(code, 0, err);
    texts.push(readFileSync(file, 'utf8'));
    const reader = await openStore(dataDir, { readOnly: true });
    try {
      texts.push(exportCaptures(reader, [id], 'har').text);
    } finally {
      await reader.close();
    }
  });
  assert.equal(texts.length, 2);
  for (const text of texts) {
    assert.ok(text.length > 0);
    assert.ok(!containsSecret(text));
    assert.ok(!text.includes(KEY.slice(8)));
  }
});

test('the masked note says what was masked and where: in `show` (human and --json) and in the exchange view header', async () => {
  const body = chatSse(pieces(`Your key is ${KEY}, keep it safe.`, 3));
  await record(body, async (dataDir, id) => {
    let human = '';
    assert.equal(await main(['show', id, '--data-dir', dataDir], { out: (t) => (human += t + '\n'), err: () => undefined }), 0);
    const line = human.split('\n').find((l) => l.startsWith('masked '));
    assert.equal(
      line,
      'masked    1 key streamed over several events (openai-key) masked, same length, in the stored response (choice 0 content) and the delivered copy (choice 0 content)',
    );
    let json = '';
    assert.equal(await main(['show', id, '--json', '--data-dir', dataDir], { out: (t) => (json += t), err: () => undefined }), 0);
    assert.deepEqual(JSON.parse(json).exchange.masked, {
      splitKeys: 1,
      labels: ['openai-key'],
      where: ['response chat:0:content', 'delivered chat:0:content'],
    });
    // The exchange view the panel posts to the webview carries it as a header line.
    const store = await openStore(dataDir, { readOnly: true });
    try {
      const x = store.get(id)!;
      const view = exchangeView({ exchange: x, chunks: store.readResponse(id)!.chunks, ruleInfo });
      assert.deepEqual(
        view.meta.find((m) => m.label === 'Masked'),
        { label: 'Masked', value: line!.slice('masked    '.length) },
      );
    } finally {
      await store.close();
    }
  });
});

test('closing the store while an exchange is finishing waits for its split-key pass: the key is masked on disk', async () => {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin({
      route: 'openai',
      upstreamUrl: 'https://api.openai.com/v1/chat/completions',
      method: 'POST',
      path: '/v1/chat/completions',
      requestHeaders: {},
      requestBody: '{"model":"m","stream":true}',
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    for (const e of chatSse(pieces(`Your key is ${KEY}, keep it safe.`, 2)).split(/(?<=\n\n)/)) w.chunk(Buffer.from(e));
    const finishing = w.finish(); // not awaited: the process is stopping
    await store.close();
    await finishing;
    const dir = join(tmp.dir, 'bodies');
    const files = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'));
    assert.ok(files.length > 0);
    for (const f of files)
      assert.ok(!containsSecret(joined(events(f.replace(/^[\s\S]*?(?=data: )/, '')))), 'no key once the deltas are joined');
    const again = await openStore(tmp.dir, { readOnly: true, analyze: false });
    try {
      assert.equal(again.get(w.id)?.masked?.splitKeys, 1, 'the masked note was stored before the database closed');
    } finally {
      await again.close();
    }
  } finally {
    tmp.remove();
  }
});

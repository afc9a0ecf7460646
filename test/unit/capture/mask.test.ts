/**
 * Response bodies are stored with key-shaped strings masked to the same length: offsets, chunk timing and the
 * JSON/SSE structure stay exact, and no key reaches the disk — also when a chunk boundary cuts a key in two.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { containsSecret, maskSecrets } from '../../../src/core/redact';
import { tempDir } from '../proxy/local-upstream';

const KEYS = {
  openrouter: 'sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  anthropic: 'sk-ant-api03-AbCdEf0123456789_AbCdEf0123456789-xyz',
  openai: 'sk-proj-AbCdEfGhIjKlMnOp0123456789',
  huggingface: 'hf_AbCdEfGhIjKlMnOpQrSt0123',
  aws: 'AKIAABCDEFGHIJ012345',
};

/** An SSE stream whose deltas echo each key (as a model quoting its prompt or a tool's output would), with non-ASCII text around. */
function sseWithKeys(): string {
  const events = [
    { choices: [{ delta: { content: 'Hé — voilà ✓ ' } }] },
    ...Object.values(KEYS).map((k) => ({ choices: [{ delta: { content: `the key is ${k}, café 🔑` } }] })),
    {
      choices: [
        { delta: { tool_calls: [{ function: { arguments: JSON.stringify({ api_key: 'abcd1234efgh5678ijkl', note: 'ünïcode' }) } }] } },
      ],
    },
  ];
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
}

/** Every event of an SSE body, parsed (throws when masking broke the JSON). */
function events(body: string): unknown[] {
  return body
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice('data: '.length)));
}

function noKeyIn(text: string, what: string): void {
  assert.ok(!containsSecret(text), `${what} holds something key-shaped`);
  // No fragment of any key's secret part either (a tail left after a masked head would still be a leak).
  for (const k of Object.values(KEYS)) assert.ok(!text.includes(k.slice(-12)), `${what} holds the end of ${k}`);
}

test('maskSecrets: each key becomes a labelled mask of its exact length; the rest is untouched, UTF-8 and JSON stay valid', () => {
  const text = sseWithKeys();
  const bytes = Buffer.from(text);
  const masked = maskSecrets(bytes);
  assert.notEqual(masked, bytes);
  assert.equal(masked.length, bytes.length);
  const out = Buffer.from(masked).toString('utf8');
  assert.ok(Buffer.from(out, 'utf8').equals(Buffer.from(masked)), 'still valid UTF-8');
  noKeyIn(out, 'masked bytes');
  assert.match(out, /\[REDACTED:openrouter-key\]\*+,/);
  assert.match(out, /\[REDACTED:aws-access,/, 'a mask longer than the key is cut to its length');
  assert.match(out, /\\"api_key\\":\\"\[REDACTED:api-key/);
  assert.equal(events(out).length, events(text).length);
  // Everything outside the keys is byte for byte what came in.
  let expected = text;
  for (const k of Object.values(KEYS)) expected = expected.replace(k, 'K'.repeat(k.length));
  expected = expected.replace('abcd1234efgh5678ijkl', 'K'.repeat(20));
  const want = [...expected];
  const diff = [...out].filter((c, i) => c !== want[i] && want[i] !== 'K');
  assert.deepEqual(diff, []);
  // Text in, text out, same length; nothing to mask returns the input itself.
  assert.equal(maskSecrets(text).length, text.length);
  assert.equal(maskSecrets(text), out);
  const clean = Buffer.from('data: {"content":"risk-management-framework"}\n\n');
  assert.equal(maskSecrets(clean), clean);
});

test('maskSecrets: a user pattern matching inside a multi-byte character masks whole characters', () => {
  const bytes = Buffer.from('name: Zoë Åström, id 42');
  const masked = maskSecrets(bytes, { patterns: [{ label: 'name', pattern: /Zo.+?str/ }] });
  assert.equal(masked.length, bytes.length);
  const out = Buffer.from(masked).toString('utf8');
  assert.ok(Buffer.from(out, 'utf8').equals(Buffer.from(masked)), 'still valid UTF-8');
  assert.ok(!out.includes('Zo') && !out.includes('str'), out);
});

/** Stores `chunks` as one response; with `together`, in corked groups of that many (chunks arriving in one read). */
async function storeChunks(chunks: Uint8Array[], together = 1): Promise<{ bytes: Buffer; offsets: number[][]; files: string[] }> {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const w = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/v1/chat/completions',
      requestHeaders: {},
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < chunks.length; i += together) {
      if (together > 1) w.cork();
      for (const c of chunks.slice(i, i + together)) w.chunk(c);
      if (together > 1) w.uncork();
    }
    await w.finish();
    const res = store.readResponse(w.id)!;
    await store.close();
    const dir = join(tmp.dir, 'bodies');
    const files = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'latin1'));
    return { bytes: Buffer.from(res.bytes), offsets: res.chunks.map((c) => [c.offset, c.length]), files };
  } finally {
    tmp.remove();
  }
}

test('a key cut by a chunk boundary at every byte offset is masked whole; offsets and lengths are as received', async () => {
  const body = Buffer.from(`data: {"choices":[{"delta":{"content":"echo ${KEYS.openrouter} and ${KEYS.anthropic}"}}]}\n\ndata: [DONE]\n\n`);
  const whole = Buffer.from(maskSecrets(body));
  const first = body.indexOf('sk-or-');
  const last = body.indexOf(KEYS.anthropic) + KEYS.anthropic.length;
  for (let cut = first - 2; cut <= last + 2; cut++) {
    const { bytes, offsets, files } = await storeChunks([body.subarray(0, cut), body.subarray(cut)]);
    assert.deepEqual(offsets, [
      [0, cut],
      [cut, body.length - cut],
    ]);
    assert.ok(bytes.equals(whole), `cut at ${cut}: ${bytes.toString()}`);
    for (const f of files) noKeyIn(f, `body file (cut at ${cut})`);
    assert.equal(events(bytes.toString()).length, 1);
  }
});

test('a key spread over many tiny chunks, and the whole stream at a random chunking, are masked whole', async () => {
  const body = Buffer.from(sseWithKeys());
  const whole = Buffer.from(maskSecrets(body));
  for (const [size, together] of [
    [1, 1],
    [3, 1],
    [7, 1],
    [64, 1],
    [1, 5],
    [7, 4],
    [64, 3],
  ]) {
    const chunks: Buffer[] = [];
    for (let off = 0; off < body.length; off += size) chunks.push(body.subarray(off, off + size));
    const { bytes, offsets, files } = await storeChunks(chunks, together);
    const what = `chunks of ${size}, ${together} per write`;
    assert.equal(offsets.length, chunks.length);
    assert.ok(bytes.equals(whole), what);
    for (const f of files) noKeyIn(f, `body file (${what})`);
    assert.equal(events(bytes.toString()).length, events(body.toString()).length);
  }
});

test('the bytes handed to the capture are never modified (they are the bytes the client gets)', async () => {
  const body = Buffer.from(sseWithKeys());
  const copy = Buffer.from(body);
  const chunks = [body.subarray(0, 150), body.subarray(150, 151), body.subarray(151)];
  const { bytes } = await storeChunks(chunks);
  assert.ok(body.equals(copy), 'the forwarded buffers were written to');
  assert.ok(!bytes.equals(body));
});

/** Stores each chunking as its own response in one store; each one's stored bytes and body file. */
async function storeMany(chunkings: Uint8Array[][]): Promise<{ bytes: Buffer; file: string }[]> {
  const tmp = tempDir();
  try {
    const store = await openStore(tmp.dir, { analyze: false });
    const ids: string[] = [];
    for (const chunks of chunkings) {
      const w = store.begin({
        route: 'openrouter',
        upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
        method: 'POST',
        path: '/v1/chat/completions',
        requestHeaders: {},
      });
      w.responseStarted(200, { 'content-type': 'text/event-stream' });
      for (const c of chunks) w.chunk(c);
      await w.finish();
      ids.push(w.id);
    }
    const out = ids.map((id) => ({
      bytes: Buffer.from(store.readResponse(id)!.bytes),
      file: readFileSync(join(tmp.dir, 'bodies', `${id}.cap`), 'latin1'),
    }));
    await store.close();
    return out;
  } finally {
    tmp.remove();
  }
}

test('long chunks around a key: a hint or a key cut at any byte, with plain text on both sides, is masked whole', async () => {
  // Plain text longer than the kept tail on each side: the chunks before and after the key go the quick way (no hint
  // in them), and the seam, the hint (`Bearer `, `"api_key": "`) or the key may fall anywhere.
  const prose = (n: number) => 'plain words, no key here. '.repeat(n);
  for (const [what, key] of [
    ['a bearer token', `Authorization: Bearer ${KEYS.openai}`],
    ['an api_key field', `{"api_key": "abcd1234efgh5678ijkl"}`],
    ['a GitHub token', 'token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV'],
  ] as const) {
    const body = Buffer.from(`data: {"choices":[{"delta":{"content":${JSON.stringify(`${prose(12)}${key}${prose(12)}`)}}}]}\n\n`);
    const whole = Buffer.from(maskSecrets(body));
    assert.ok(!whole.equals(body), `${what}: the reference masks something`);
    // The key as it stands in the body (JSON-escaped).
    const inBody = JSON.stringify(key).slice(1, -1);
    const at = body.indexOf(inBody);
    assert.ok(at > 300, what);
    // Where the whole body's mask ends (a mask may run past the key's last byte).
    let end = body.length;
    while (end > 0 && whole[end - 1] === body[end - 1]) end--;
    const cuts = Array.from({ length: inBody.length + 36 }, (_, i) => at - 12 + i);
    // Two chunks, and a few bytes alone at the seam. A part of a key can be masked under another label before the rest
    // comes (a cut `Bearer sk-proj-Ab` reads as a bearer token), but nothing key-shaped reaches the disk, the length
    // stays, and nothing outside the key changes.
    const chunkings = cuts.flatMap((cut) => [
      [body.subarray(0, cut), body.subarray(cut)],
      [body.subarray(0, 40), body.subarray(40, cut), body.subarray(cut, cut + 3), body.subarray(cut + 3)],
    ]);
    const stored = await storeMany(chunkings);
    stored.forEach(({ bytes, file }, i) => {
      const where = `${what}, cut at ${cuts[i >> 1]} (${chunkings[i].length} chunks)`;
      assert.equal(bytes.length, body.length, where);
      assert.ok(
        bytes.subarray(0, at).equals(whole.subarray(0, at)) && bytes.subarray(end).equals(whole.subarray(end)),
        `${where}: only the key's bytes change`,
      );
      assert.ok(!bytes.subarray(at, end).equals(body.subarray(at, end)), `${where}: the key is masked`);
      assert.ok(!containsSecret(file) && !file.includes(key.slice(-12)), `${where}: the body file holds the key`);
    });
  }
});

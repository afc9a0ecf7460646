/**
 * Randomized transparency: hundreds of generated responses (valid and malformed SSE, binary, gzip, tiny and huge
 * chunks, odd statuses) fetched directly and through the proxy must arrive byte-identical, and the capture must
 * hold the decoded body.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { prng as rng } from '../../helpers/prng';
import { rawRequest, startRig, startUpstream, waitFor } from '../../unit/proxy/local-upstream';

const CASES = 300;

interface Case {
  status: number;
  headers: Record<string, string>;
  /** The body as sent, split into the chunks the upstream writes. */
  chunks: Buffer[];
  /** What the capture should hold (decoded). */
  decoded: Buffer;
}

function makeCase(n: number): Case {
  const r = rng(n + 1);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const kind = pick(['sse', 'sse', 'malformed', 'binary', 'json', 'anthropic']);
  let body: Buffer;
  if (kind === 'binary') {
    body = Buffer.alloc(Math.floor(r() * 200_000));
    for (let i = 0; i < body.length; i++) body[i] = Math.floor(r() * 256);
  } else if (kind === 'json') {
    body = Buffer.from(JSON.stringify({ id: `gen-${n}`, choices: [{ message: { content: 'x'.repeat(Math.floor(r() * 5000)) } }] }));
  } else {
    const events: string[] = [];
    const count = Math.floor(r() * 400);
    for (let i = 0; i < count; i++) {
      const text = 'é€😀<|tool_call_begin|>'.slice(0, Math.floor(r() * 20)) + 'abc'.repeat(Math.floor(r() * 30));
      if (kind === 'anthropic')
        events.push(
          `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })}\n\n`,
        );
      else if (kind === 'malformed')
        events.push(
          pick([
            `data: {"broken":${text}\n\n`,
            `: OPENROUTER PROCESSING\n\n`,
            `data: ${text}\r\n`,
            `\n\n\n`,
            `data: {"ok":1}\n\n`,
            'data:',
          ]),
        );
      else events.push(`data: ${JSON.stringify({ choices: [{ delta: { content: text } }] })}\n\n`);
    }
    if (kind !== 'malformed')
      events.push(kind === 'anthropic' ? 'event: message_stop\ndata: {"type":"message_stop"}\n\n' : 'data: [DONE]\n\n');
    body = Buffer.from(events.join(''));
  }
  const gzip = kind !== 'binary' && r() < 0.3;
  const wire = gzip ? gzipSync(body) : body;
  // Chunk sizes from 1 byte to 1 MiB, favouring small ones like real token streams.
  const chunks: Buffer[] = [];
  for (let off = 0; off < wire.length; ) {
    const size = Math.max(1, Math.floor(r() < 0.05 ? r() * 1024 * 1024 : r() < 0.5 ? r() * 16 : r() * 4096));
    chunks.push(wire.subarray(off, off + size));
    off += size;
  }
  const type = {
    sse: 'text/event-stream',
    malformed: 'text/event-stream',
    anthropic: 'text/event-stream',
    binary: 'application/octet-stream',
    json: 'application/json',
  }[kind]!;
  return {
    status: pick([200, 200, 200, 200, 201, 400, 429, 500]),
    headers: {
      'content-type': type,
      'x-case': String(n),
      ...(gzip && { 'content-encoding': 'gzip' }),
      ...(r() < 0.3 && { 'content-length': String(wire.length) }),
    },
    chunks,
    decoded: gzip ? gunzipSync(wire) : body,
  };
}

test(`${CASES} randomized responses arrive through the proxy byte-identical to a direct connection`, async () => {
  const cases = Array.from({ length: CASES }, (_, n) => makeCase(n));
  const up = await startUpstream((req, res) => {
    req.resume();
    const c = cases[Number(req.url!.split('/').pop())];
    res.writeHead(c.status, c.headers);
    let i = 0;
    // Each chunk its own write, some after a macrotask so they leave as separate TCP segments.
    const next = () => {
      while (i < c.chunks.length) {
        const ok = res.write(c.chunks[i++]);
        if (!ok) return res.once('drain', next);
        if (i % 7 === 0) return setImmediate(next);
      }
      res.end();
    };
    next();
  });
  const rig = await startRig({ default: up.url }, { analyze: false });
  try {
    const ids = new Map<string, number>();
    rig.store.onDidChange((e) => e.kind === 'added' && ids.set(e.exchange.id, Number(e.exchange.path.split('/').pop())));
    let next = 0;
    const worker = async () => {
      while (next < CASES) {
        const n = next++;
        const direct = await rawRequest(`${up.url}/v1/case/${n}`, { body: '{}' });
        const proxied = await rawRequest(`${rig.proxy.url}/v1/case/${n}`, { body: '{}' });
        assert.equal(proxied.status, direct.status, `case ${n} status`);
        assert.ok(
          proxied.body.equals(direct.body),
          `case ${n}: ${proxied.body.length} bytes through the proxy vs ${direct.body.length} direct`,
        );
        assert.equal(proxied.headers['content-type'], direct.headers['content-type']);
        assert.equal(proxied.headers['content-encoding'], direct.headers['content-encoding']);
        assert.equal(proxied.error, undefined);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    await waitFor(() => rig.store.list().filter((x) => x.state === 'complete').length === CASES, 'every capture', 20_000);
    for (const x of rig.store.list()) {
      const n = ids.get(x.id)!;
      assert.ok(
        Buffer.from(rig.store.readResponse(x.id)!.bytes).equals(cases[n].decoded),
        `case ${n}: capture differs from the decoded body`,
      );
    }
  } finally {
    await rig.close();
    await up.close();
  }
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rawRequest, startRig, startUpstream, waitFor } from '../../unit/proxy/local-upstream';

const STREAMS = 100;
const CHUNKS = 100;

test(`${STREAMS} concurrent streams: every client gets its exact bytes, every exchange is captured once`, async () => {
  const body = (n: number) => Array.from({ length: CHUNKS }, (_, i) => `data: {"stream":${n},"i":${i}}\n\n`);
  const up = await startUpstream((req, res) => {
    req.resume();
    const n = Number(req.url!.split('/').pop());
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const parts = body(n);
    let i = 0;
    const timer = setInterval(() => {
      res.write(parts[i++]);
      if (i === parts.length) {
        clearInterval(timer);
        res.end('data: [DONE]\n\n');
      }
    }, 2);
  });
  const rig = await startRig({ default: up.url }, { analyze: false });
  try {
    const results = await Promise.all(
      Array.from({ length: STREAMS }, (_, n) => rawRequest(`${rig.proxy.url}/v1/stream/${n}`, { body: '{}' })),
    );
    results.forEach((r, n) => assert.equal(r.body.toString(), body(n).join('') + 'data: [DONE]\n\n', `stream ${n}`));
    await waitFor(() => rig.store.list().filter((x) => x.state === 'complete').length === STREAMS, 'every capture', 10_000);
    const list = rig.store.list();
    assert.equal(list.length, STREAMS, 'no duplicates');
    assert.equal(new Set(list.map((x) => x.id)).size, STREAMS, 'unique ids');
    assert.deepEqual(list.map((x) => x.path).sort(), Array.from({ length: STREAMS }, (_, n) => `/v1/stream/${n}`).sort());
    for (const x of list) {
      const n = Number(x.path.split('/').pop());
      assert.equal(
        Buffer.from(rig.store.readResponse(x.id)!.bytes).toString(),
        body(n).join('') + 'data: [DONE]\n\n',
        `capture of stream ${n}`,
      );
    }
  } finally {
    await rig.close();
    await up.close();
  }
});

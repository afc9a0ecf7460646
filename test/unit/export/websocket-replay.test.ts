// A WebSocket exchange (the Responses API's WebSocket mode) replayed by the curl script and the HAR export: its
// response.create message goes out as the POST it stands for, without the message's `type`, streamed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { replayOf, writeCurl } from '../../../src/core/export/curl';
import { writeHar } from '../../../src/core/export/har';
import { prepareRepro } from '../../../src/core/export/repro';
import { httpEquivalent } from '../../../src/core/wire/websocket-request';
import { brokenKimiCapture } from '../../fixtures/export/captures';

const MESSAGE = {
  type: 'response.create',
  model: 'moonshotai/kimi-k2-0905',
  input: [{ role: 'user', content: 'hi' }],
  tools: [],
  stream: false,
};

function wsCapture() {
  const c = brokenKimiCapture();
  Object.assign(c.exchange, {
    route: 'openai',
    method: 'GET',
    path: '/openai/v1/responses',
    upstreamUrl: 'http://127.0.0.1:9/v1/responses',
    requestHeaders: { authorization: 'Bearer sk-proj-AbCdEfGhIjKlMnOp0123456789', upgrade: 'websocket' },
    requestBody: JSON.stringify(MESSAGE),
    status: 101,
    websocket: { connection: 'mikk2p-0a1b2c3d', response: 1 },
  });
  return c;
}

const expected = () => {
  const { type: _t, ...rest } = MESSAGE;
  return { ...rest, stream: true };
};

test('the curl replay of a WebSocket exchange POSTs the response.create fields without type, streamed', (t) => {
  const r = prepareRepro(wsCapture());
  const rep = replayOf(r);
  assert.equal(rep.method, 'POST');
  assert.equal(rep.url, 'http://127.0.0.1:9/v1/responses');
  assert.deepEqual(JSON.parse(rep.body!), expected());
  assert.ok(rep.headers.some(([n, v]) => n.toLowerCase() === 'content-type' && v === 'application/json'));
  const script = writeCurl(r);
  assert.match(script, /curl -sS -N -X POST 'http:\/\/127\.0\.0\.1:9\/v1\/responses'/);
  assert.doesNotMatch(script, /response\.create/);
  if (spawnSync('sh', ['-c', 'true']).status !== 0) return t.skip('no POSIX shell here to run the script');
  const fake = `curl() { for a in "$@"; do printf 'ARG %s\\n' "$a"; done; printf 'STDIN %s\\n' "$(cat)"; }\n`;
  const out = spawnSync('sh', ['-c', fake + script.replace(/^#!.*\n/, '')], {
    env: { PATH: process.env.PATH ?? '', OPENAI_API_KEY: 'k' },
    encoding: 'utf8',
  }).stdout.split('\n');
  assert.deepEqual(JSON.parse(out.find((l) => l.startsWith('STDIN '))!.slice(6)), expected());
  assert.ok(out.includes('ARG POST'), out.join('\n'));
});

test('the HAR entry of a WebSocket exchange is the POST with the response.create fields without type', () => {
  const har = JSON.parse(writeHar([prepareRepro(wsCapture())]));
  const req = har.log.entries[0].request;
  assert.equal(req.method, 'POST');
  assert.deepEqual(JSON.parse(req.postData.text), expected());
  assert.equal(req.bodySize, Buffer.byteLength(req.postData.text));
  assert.match(req.comment, /WebSocket/);
});

test('only a WebSocket exchange with a response.create message has an HTTP equivalent; an HTTP exchange replays as it was', () => {
  const c = brokenKimiCapture();
  assert.equal(httpEquivalent(c.exchange), undefined);
  assert.equal(replayOf(prepareRepro(c)).method, 'POST');
  assert.equal(httpEquivalent({ websocket: { connection: 'c', response: 1 }, requestBody: '{"type":"session.update"}' }), undefined);
  assert.equal(httpEquivalent({ websocket: { connection: 'c', response: 1 }, requestBody: 'not json' }), undefined);
});

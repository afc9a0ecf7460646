import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHar, writeHar } from '../../../src/core/export/har';
import { parseImport } from '../../../src/core/export/import';
import { prepareRepro } from '../../../src/core/export/repro';
import { analyzeExchange } from '../../../src/core/analyze';
import { UserError } from '../../../src/core/model';
import { brokenKimiCapture, CANARY } from '../../fixtures/export/captures';
import { harProblems } from '../../fixtures/export/har12';

const fixture = (name: string) => readFileSync(join(__dirname, '..', '..', 'fixtures', 'export', name), 'utf8');

test('an exported HAR conforms to HAR 1.2', () => {
  const har = JSON.parse(writeHar([prepareRepro(brokenKimiCapture())]));
  assert.deepEqual(harProblems(har), []);
  const e = har.log.entries[0];
  assert.equal(e.request.postData.mimeType, 'application/json');
  assert.equal(e.response.content.mimeType, 'text/event-stream');
  assert.equal(e.response.content.encoding, undefined, 'an SSE body is text');
  assert.equal(e.response.statusText, 'OK');
  assert.equal(e.timings.wait, 412.5);
  assert.match(e.comment, /section-unclosed/);
});

test('the validator itself rejects what HAR 1.2 forbids', () => {
  const har = JSON.parse(writeHar([prepareRepro(brokenKimiCapture())]));
  delete har.log.entries[0].cache;
  har.log.entries[0].response.content.size = '12';
  har.log.entries[0].tokenscope = {};
  har.log.entries[0].time = 1;
  assert.deepEqual(harProblems(har).sort(), [
    'log.entries[0].cache',
    'log.entries[0].response.content.size',
    'log.entries[0].time = sum of timings',
    'log.entries[0].tokenscope (custom fields start with "_")',
  ]);
});

test('a Tokenscope HAR imports back without loss (exchange, bytes, chunk timing)', () => {
  const r = prepareRepro(brokenKimiCapture());
  const { captures, skipped } = readHar(writeHar([r]));
  assert.equal(skipped.length, 0);
  assert.equal(captures.length, 1);
  assert.deepEqual(captures[0].exchange, r.exchange);
  assert.deepEqual(captures[0].responseBody, r.responseBody);
  assert.deepEqual(captures[0].chunks, r.chunks);
});

test('a session exports as one HAR, entries in start order', () => {
  const t0 = Date.UTC(2026, 10, 30, 2, 0, 0);
  const second = prepareRepro(brokenKimiCapture({ id: 'b', startedAt: t0 + 5000 }));
  const first = prepareRepro(brokenKimiCapture({ id: 'a', startedAt: t0 }));
  const har = JSON.parse(writeHar([second, first]));
  assert.deepEqual(harProblems(har), []);
  assert.deepEqual(
    har.log.entries.map((e: { _tokenscope: { id: string } }) => e._tokenscope.id),
    ['a', 'b'],
  );
  assert.deepEqual(
    readHar(JSON.stringify(har)).captures.map((c) => c.exchange.id),
    ['a', 'b'],
  );
});

test('a browser devtools HAR: the model call is found among page assets, HTTP/2 pseudo-headers dropped', () => {
  const { captures, skipped } = readHar(fixture('devtools-openrouter-sse.har'));
  assert.equal(captures.length, 1);
  assert.deepEqual(
    skipped.map((s) => s.why),
    ['not a model API call', 'not a model API call'],
  );
  const c = captures[0];
  assert.equal(c.exchange.route, 'openrouter');
  assert.equal(c.exchange.path, '/api/v1/chat/completions');
  assert.ok(!Object.keys(c.exchange.requestHeaders).some((k) => k.startsWith(':')));
  assert.equal(c.exchange.status, 200);
  assert.equal(c.exchange.startedAt, Date.parse('2026-11-29T21:14:05.532Z'));
  assert.equal(c.exchange.endedAt, c.exchange.startedAt + 1634.7);
  // No chunk timing in a foreign HAR: the whole body arrives at the time to first byte.
  assert.deepEqual(c.chunks, [{ t: 2.3 + 0.4 + 611.2, offset: 0, length: c.responseBody.length }]);
  const { analysis } = analyzeExchange(c.exchange, c.responseBody, c.chunks);
  assert.ok(
    analysis.findings.some((f) => f.rule === 'section-unclosed'),
    'the SSE body from content.text is analysed',
  );
  // Parsing does not redact (import does, on the way into the store): the raw values are still here.
  assert.match(c.exchange.requestHeaders.authorization, new RegExp(CANARY.headerKey));
});

test('a mitmproxy HAR with a base64 body', () => {
  const { captures } = readHar(fixture('mitmproxy-sglang.har'));
  assert.equal(captures.length, 1);
  const c = captures[0];
  assert.equal(c.exchange.route, 'imported');
  assert.equal(c.exchange.upstreamUrl, 'http://127.0.0.1:30000/v1/chat/completions');
  const body = JSON.parse(new TextDecoder().decode(c.responseBody));
  assert.equal(body.object, 'chat.completion');
  assert.equal(c.exchange.startedAt, Date.parse('2026-11-29T22:01:10.004Z'));
  const { analysis } = analyzeExchange(c.exchange, c.responseBody, c.chunks);
  assert.ok(analysis.findings.some((f) => f.rule === 'section-unclosed'));
});

function rejects(text: string, pattern: RegExp): void {
  assert.throws(
    () => readHar(text),
    (e: unknown) => e instanceof UserError && pattern.test(e.message) && !e.message.includes('\n'),
  );
}

test('unusable HARs give a clear one-line error', () => {
  rejects(JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [] } }), /has no entries/);
  rejects(JSON.stringify({ log: { version: '1.2' } }), /"log.entries" is missing/);
  rejects(JSON.stringify({ nope: true }), /no "log"/);
  rejects(fixture('devtools-openrouter-sse.har').slice(0, 2000), /cut short or malformed/);
  const assetsOnly = JSON.parse(fixture('devtools-openrouter-sse.har'));
  assetsOnly.log.entries.splice(1, 1);
  rejects(JSON.stringify(assetsOnly), /none of its 2 entries is a model API exchange \(not a model API call\)/);
});

test('a HAR saved with a byte-order mark imports like one without', () => {
  const r = prepareRepro(brokenKimiCapture());
  const parsed = parseImport('\ufeff' + writeHar([r]), 'fiddler.har');
  assert.equal(parsed.kind, 'har');
  assert.deepEqual(parsed.captures[0].responseBody, r.responseBody);
});

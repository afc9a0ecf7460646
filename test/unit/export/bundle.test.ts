import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeBundle } from '../../../src/core/export/bundle';
import { readBundle, BUNDLE_FORMAT } from '../../../src/core/capture/bundle-read';
import { prepareRepro } from '../../../src/core/export/repro';
import { UserError } from '../../../src/core/model';
import { brokenKimiCapture, CANARY } from '../../fixtures/export/captures';

const capture = () => brokenKimiCapture();

test('a bundle reads back to the same exchange, response bytes and chunk timing', () => {
  const r = prepareRepro(capture(), { tokenscopeVersion: '9.9.9' });
  const text = writeBundle(r, { now: () => new Date('2026-11-30T03:00:00Z') });
  const b = readBundle(text);
  assert.deepEqual(b.exchange, r.exchange);
  assert.deepEqual(b.responseBody, r.responseBody);
  assert.deepEqual(b.chunks, r.chunks);
  assert.equal(b.tokenscopeVersion, '9.9.9');
  assert.equal(b.createdAt, '2026-11-30T03:00:00.000Z');
  assert.deepEqual(b.agent, { name: 'opencode', userAgent: 'opencode/0.15.2 ai-sdk/openai-compatible/1.0.0', version: '0.15.2' });
  assert.deepEqual(
    b.tools.map((t) => t.name),
    ['read'],
  );
});

test('the bundle records served provider, usage, findings with why, and a readable SSE body', () => {
  const r = prepareRepro(capture());
  const v = JSON.parse(writeBundle(r));
  assert.equal(v.format, BUNDLE_FORMAT);
  assert.equal(v.version, 1);
  assert.equal(v.response.encoding, 'utf8');
  assert.match(v.response.body, /^: OPENROUTER PROCESSING/);
  assert.equal(v.served.provider, 'Chutes');
  assert.equal(v.served.finishReason, 'stop');
  assert.equal(v.served.generationId, 'gen-1764470000-C4n4ryGen');
  assert.equal(v.usage.completionTokens, 42);
  const rules = v.findings.map((f: { rule: string }) => f.rule);
  assert.ok(rules.includes('section-unclosed'), rules.join());
  const unclosed = v.findings.find((f: { rule: string }) => f.rule === 'section-unclosed');
  assert.equal(unclosed.expectedMarker, '<|tool_calls_section_end|>');
  assert.ok(unclosed.title && unclosed.why, 'findings carry the rule title and why');
});

test('a body that is not UTF-8 travels as base64 and comes back byte for byte; a BOM survives', () => {
  const c = capture();
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d, 0xff, 0xfe, 0x00, 0x80]);
  const odd = {
    ...c,
    responseBody: bytes,
    chunks: [
      { t: 1, offset: 0, length: 5 },
      { t: 2.5, offset: 5, length: 4 },
    ],
  };
  const r = prepareRepro(odd);
  const v = JSON.parse(writeBundle(r));
  assert.equal(v.response.encoding, 'base64');
  const b = readBundle(JSON.stringify(v));
  assert.deepEqual([...b.responseBody], [...bytes]);
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
  const withBom = readBundle(writeBundle(prepareRepro({ ...c, responseBody: bom, chunks: [{ t: 0, offset: 0, length: 5 }] })));
  assert.deepEqual([...withBom.responseBody], [...bom]);
});

function rejects(text: string, pattern: RegExp): void {
  assert.throws(
    () => readBundle(text),
    (e: unknown) => e instanceof UserError && pattern.test(e.message) && !e.message.includes('\n'),
  );
}

test('unusable bundles give a clear one-line error', () => {
  const good = writeBundle(prepareRepro(capture()));
  rejects(good.slice(0, good.length / 2), /cut short or malformed/);
  rejects('', /empty/);
  rejects(JSON.stringify({ format: 'something.else', version: 1 }), /"format" is "something.else"/);
  rejects(JSON.stringify({ log: { entries: [] } }), /"format" is missing/);
  const v = JSON.parse(good);
  rejects(JSON.stringify({ ...v, version: 99 }), /schema version 99.*reads version 1.*update Tokenscope/);
  rejects(JSON.stringify({ ...v, version: '1' }), /"version"/);
  rejects(JSON.stringify({ ...v, exchange: { ...v.exchange, startedAt: 'yesterday' } }), /exchange.startedAt/);
  rejects(JSON.stringify({ ...v, response: { ...v.response, encoding: 'gzip' } }), /encoding/);
  rejects(JSON.stringify({ ...v, response: { ...v.response, encoding: 'base64', body: '***' } }), /not valid base64/);
  const chunks = v.response.chunks.slice(0, -1);
  rejects(JSON.stringify({ ...v, response: { ...v.response, chunks } }), /cover \d+ bytes but the body has \d+/);
  const gap = v.response.chunks.map((c: { offset: number }, i: number) => (i === 2 ? { ...c, offset: c.offset + 1 } : c));
  rejects(JSON.stringify({ ...v, response: { ...v.response, chunks: gap } }), /chunks\[2\]/);
});

test('fields a newer version 1 writer added are ignored', () => {
  const v = JSON.parse(writeBundle(prepareRepro(capture())));
  const b = readBundle(JSON.stringify({ ...v, tokens: { count: 12 }, somethingNew: true }));
  assert.equal(b.exchange.id, v.exchange.id);
});

test('exportCaptures goes from any capture reader to redacted text in one call', async () => {
  const { exportCaptures } = await import('../../../src/core/export/index');
  const c = brokenKimiCapture({ secrets: true });
  const reader = {
    list: () => [c.exchange],
    get: (id: string) => (id === c.exchange.id ? c.exchange : undefined),
    readResponse: (id: string) => (id === c.exchange.id ? { bytes: c.responseBody, chunks: c.chunks } : undefined),
  };
  const { text, repros } = exportCaptures(reader, [c.exchange.id.slice(0, 6)], 'bundle', { tokenscopeVersion: '1.2.3' });
  assert.equal(readBundle(text).exchange.id, c.exchange.id);
  assert.equal(repros[0].tokenscopeVersion, '1.2.3');
  assert.ok(!text.includes(CANARY.headerKey) && !text.includes(CANARY.responseKey));
  assert.throws(
    () => exportCaptures(reader, ['nope'], 'bundle'),
    (e: unknown) => e instanceof UserError && /no capture with id "nope"/.test(e.message),
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EXPORT_FORMATS,
  exportText,
  parseRedactPattern,
  presetPattern,
  prepareRepro,
  previewRedactions,
} from '../../../src/core/export/index';
import { redactCapture } from '../../../src/core/export/redaction';
import { UserError } from '../../../src/core/model';
import { brokenKimiCapture, CANARY } from '../../fixtures/export/captures';

const userPatterns = [presetPattern('home', '/home/c4n4ryuser')!, presetPattern('email')!];

test('no canary survives in any export format', () => {
  const r = prepareRepro(brokenKimiCapture({ secrets: true }), { patterns: userPatterns });
  for (const format of EXPORT_FORMATS) {
    const text = exportText([r], format);
    for (const [where, canary] of Object.entries(CANARY)) {
      assert.ok(!text.includes(canary), `${format}: the ${where} canary survived`);
    }
    // Pieces too: a canary must not survive split or escaped either.
    assert.ok(!/c4n4ry(?!user)/i.test(text.replace(/C4n4ryGen/g, '')), `${format}: part of a canary survived`);
    // A base64 form of a canary would slip past a text search: there is none.
    assert.ok(!text.includes(Buffer.from(CANARY.responseKey).toString('base64').slice(0, 16)), `${format}: base64 canary`);
  }
});

test('labelled placeholders stand where the secrets were', () => {
  const r = prepareRepro(brokenKimiCapture({ secrets: true }), { patterns: userPatterns });
  const har = exportText([r], 'har');
  for (const label of [
    'authorization-header',
    'cookie-header',
    'set-cookie-header',
    'x-debug-key-header',
    'openai-key',
    'anthropic-key',
    'github-token',
    'home',
    'email',
  ]) {
    assert.ok(har.includes(`[REDACTED:${label}]`), label);
  }
  // Only the user's part of a home path goes: the rest of the path stays readable.
  assert.ok(har.includes('[REDACTED:home]/repo/app.ts'));
});

test('the preview lists every redaction before anything is saved', () => {
  const items = previewRedactions(brokenKimiCapture({ secrets: true }), { patterns: userPatterns });
  const seen = items.map((x) => `${x.label} @ ${x.where}`).sort();
  assert.deepEqual(seen, [
    'anthropic-key @ response body',
    'authorization-header @ request header authorization',
    'cookie-header @ request header cookie',
    'github-token @ response body',
    'openai-key @ request body',
    'set-cookie-header @ response header set-cookie',
    'user-pattern:email @ request body',
    'user-pattern:home @ request body',
    'user-pattern:home @ response body',
    // A header whose name says key is redacted whole, whatever its value looks like.
    'x-debug-key-header @ request header x-debug-key',
  ]);
  for (const x of items) assert.ok(!Object.values(CANARY).some((c) => x.preview.length > 5 || c === x.preview), 'previews are short');
  assert.deepEqual(previewRedactions(brokenKimiCapture()), [], 'a clean capture has nothing to redact');
});

test('redaction keeps the chunk timing tiling the shorter body, each chunk at its own time', () => {
  const input = brokenKimiCapture({ secrets: true });
  const { capture } = redactCapture(input);
  assert.ok(capture.responseBody.length < input.responseBody.length);
  let end = 0;
  for (const [i, c] of capture.chunks.entries()) {
    assert.equal(c.offset, end);
    assert.equal(c.t, input.chunks[i].t);
    end += c.length;
  }
  assert.equal(end, capture.responseBody.length);
  // Chunks before the first secret are untouched; each chunk still holds whole SSE events.
  assert.deepEqual(capture.chunks[0], input.chunks[0]);
  const text = new TextDecoder().decode(capture.responseBody);
  for (const c of capture.chunks) assert.match(text.slice(c.offset, c.offset + c.length), /\n\n$/);
  assert.equal(capture.exchange.responseBytes, capture.responseBody.length);
});

test('redaction is idempotent and never touches a clean capture', () => {
  const once = redactCapture(brokenKimiCapture({ secrets: true })).capture;
  const twice = redactCapture(once);
  assert.deepEqual(twice.report, []);
  assert.deepEqual(twice.capture, once);
  const clean = brokenKimiCapture();
  assert.equal(redactCapture(clean).capture.responseBody, clean.responseBody);
});

test('credentials in URL query strings are redacted whatever they look like', () => {
  const c = brokenKimiCapture();
  c.exchange.upstreamUrl = 'https://generativelanguage.example/v1/models/x:streamGenerateContent?alt=sse&key=plainsecret123';
  c.exchange.path = '/v1/models/x:streamGenerateContent?alt=sse&key=plainsecret123';
  const { capture, report } = redactCapture(c);
  assert.equal(
    capture.exchange.upstreamUrl,
    'https://generativelanguage.example/v1/models/x:streamGenerateContent?alt=sse&key=[REDACTED:url-credential]',
  );
  assert.ok(!capture.exchange.path.includes('plainsecret123'));
  assert.equal(report.filter((x) => x.label === 'url-credential').length, 2);
});

test('a key the model streamed over several events is reported, and no export that would reassemble it is written', () => {
  const c = brokenKimiCapture();
  const key = 'sk-proj-Spl1tAcr0ssEv3nts0000000';
  const text = new TextDecoder().decode(c.responseBody).replace('I will read the file.', `${key.slice(0, 12)}", "x":"`);
  // Rebuild the stream so the key is cut across two content deltas.
  const split = text.replace(
    `${key.slice(0, 12)}", "x":"`,
    `${key.slice(0, 12)}"},"finish_reason":null,"native_finish_reason":null}]}\n\ndata: {"id":"gen-1764470000-C4n4ryGen","provider":"Chutes","model":"moonshotai/kimi-k2-0905","object":"chat.completion.chunk","created":1764470000,"choices":[{"index":0,"delta":{"role":"assistant","content":"${key.slice(12)}`,
  );
  const body = new TextEncoder().encode(split.replace(`${key.slice(12)}", "x":"`, key.slice(12)));
  const input = { ...c, responseBody: body, chunks: [{ t: 1, offset: 0, length: body.length }] };
  const r = prepareRepro(input);
  assert.ok(
    r.redactions.some((x) => x.label === 'split-key'),
    JSON.stringify(r.redactions),
  );
  // Every format refuses with one line: the raw stream in a bundle or HAR would put the key back together.
  for (const format of EXPORT_FORMATS) {
    assert.throws(
      () => exportText([r], format),
      (e: unknown) =>
        e instanceof UserError &&
        /^export refused: capture \S+ holds a key the model streamed over several events/.test(e.message) &&
        !e.message.includes('\n'),
      format,
    );
  }
});

test('--redact values: presets, LABEL=REGEX, bare REGEX; bad ones are one-line errors', () => {
  assert.equal(parseRedactPattern('email').label, 'email');
  assert.deepEqual(parseRedactPattern('ticket=JIRA-\\d+'), { label: 'ticket', pattern: 'JIRA-\\d+' });
  assert.deepEqual(parseRedactPattern('acme-[a-z]+'), { label: 'custom', pattern: 'acme-[a-z]+' });
  assert.throws(
    () => parseRedactPattern('x=('),
    (e: unknown) => e instanceof UserError && /not a valid regular expression/.test(e.message),
  );
  assert.throws(
    () => parseRedactPattern('a*'),
    (e: unknown) => e instanceof UserError && /matches the empty string/.test(e.message),
  );
});

test('the home preset covers Linux, macOS and Windows paths, plain and JSON-escaped', () => {
  const re = new RegExp(presetPattern('home', '/srv/users/bob')!.pattern, 'g');
  const text = 'a /home/alice/x b /Users/carol/y c C:\\Users\\dave\\z d {"p":"C:\\\\Users\\\\erin\\\\w"} e /srv/users/bob/v';
  assert.equal(text.replace(re, '[H]'), 'a [H]/x b [H]/y c [H]\\z d {"p":"[H]\\\\w"} e [H]/v');
});

test('a secret cut across two network chunks is redacted and the chunks still tile the body', () => {
  const c = brokenKimiCapture();
  const text = `data: {"k":"${CANARY.messageKey}"}\n\ndata: [DONE]\n\n`;
  const body = new TextEncoder().encode(text);
  const cut = text.indexOf(CANARY.messageKey) + 10;
  const input = {
    ...c,
    responseBody: body,
    chunks: [
      { t: 5, offset: 0, length: cut },
      { t: 9, offset: cut, length: body.length - cut },
    ],
  };
  const { capture } = redactCapture(input);
  const out = new TextDecoder().decode(capture.responseBody);
  assert.equal(out, 'data: {"k":"[REDACTED:openai-key]"}\n\ndata: [DONE]\n\n');
  assert.equal(capture.chunks.length, 2);
  assert.equal(capture.chunks[0].offset + capture.chunks[0].length, capture.chunks[1].offset);
  assert.equal(capture.chunks[1].offset + capture.chunks[1].length, capture.responseBody.length);
  assert.deepEqual(
    capture.chunks.map((x) => x.t),
    [5, 9],
  );
});

test('words that merely contain "sk-" are not keys', () => {
  const c = brokenKimiCapture();
  c.exchange.requestBody = JSON.stringify({
    messages: [{ role: 'user', content: 'read the risk-management-framework-overview and disk-encryption-settings-page' }],
  });
  const { capture, report } = redactCapture(c);
  assert.equal(capture.exchange.requestBody, c.exchange.requestBody);
  assert.deepEqual(report, []);
});

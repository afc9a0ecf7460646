import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containsSecret, redactHeaders, redactText, type Redaction } from '../../src/core/redact';

const OR_KEY = 'sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const OA_KEY = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123';
const ANT_KEY = 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv';

test('secret headers are replaced whole, whatever their value', () => {
  const report: Redaction[] = [];
  const h = redactHeaders(
    { Authorization: `Bearer ${OR_KEY}`, 'x-api-key': 'short', Cookie: 'a=b', 'content-type': 'application/json' },
    { report },
  );
  assert.equal(h.Authorization, '[REDACTED:authorization-header]');
  assert.equal(h['x-api-key'], '[REDACTED:x-api-key-header]');
  assert.equal(h.Cookie, '[REDACTED:cookie-header]');
  assert.equal(h['content-type'], 'application/json');
  assert.equal(report.length, 3);
  assert.ok(!JSON.stringify(h).includes(OR_KEY));
});

test('key-shaped strings anywhere in a body are replaced with labelled placeholders', () => {
  const body = JSON.stringify({ messages: [{ role: 'user', content: `my key is ${OR_KEY} and ${OA_KEY}, also ${ANT_KEY}` }] });
  const out = redactText(body);
  assert.ok(!out.includes(OR_KEY) && !out.includes(OA_KEY) && !out.includes(ANT_KEY));
  assert.match(out, /\[REDACTED:openrouter-key\]/);
  assert.match(out, /\[REDACTED:openai-key\]/);
  assert.match(out, /\[REDACTED:anthropic-key\]/);
  assert.doesNotThrow(() => JSON.parse(out));
  assert.equal(containsSecret(out), false);
  assert.equal(containsSecret(body), true);
});

test('user patterns (home paths, emails) are applied and reported', () => {
  const report: Redaction[] = [];
  const out = redactText('open /home/alice/project/a.ts and mail alice@example.com', {
    patterns: [
      { label: 'home', pattern: '/home/[^/\\s]+' },
      { label: 'email', pattern: /[\w.+-]+@[\w-]+\.[\w.]+/ },
    ],
    report,
  });
  assert.equal(out, 'open [REDACTED:home]/project/a.ts and mail [REDACTED:email]');
  assert.deepEqual(
    report.map((r) => r.label),
    ['user-pattern:home', 'user-pattern:email'],
  );
});

test('ordinary text is left alone', () => {
  const text = 'The sky-blue tokens: sk-short, task-force, risk-free.';
  assert.equal(redactText(text), text);
});

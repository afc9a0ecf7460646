import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containsSecret, maskSecrets, redactHeaders, redactText, type Redaction } from '../../src/core/redact';

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

// Shapes as the providers issue them (random bodies, not real keys).
const MORE_KEYS: [label: string, key: string][] = [
  ['aws-access-key-id', 'AKIAIOSFODNN7EXAMPLE'],
  ['aws-access-key-id', 'ASIAY34FZKBOKMUTVV7A'],
  ['groq-key', 'gsk_4fQx9ZpL2mWv8TbN1cRd7YhJ3kGs6AeU0oIiPlMnBqXwEz5t'],
  ['fireworks-key', 'fw_3ZkQp9LxWv2mTbN8cRd7YhJs'],
  ['xai-key', 'xai-Qm7kP2zLx9Wv4TbN8cRd1YhJ3kGs6AeU0oIiPlMnBqXwEz5tRr2Dd8Ff0Gg1Hh7Jj4Kk3Ll6Mm9Nn2Pp5Qq8Rr1Ss'],
  ['together-key', 'tgp_v1_Qm7kP2zLx9Wv4TbN8cRd1YhJ3kGs6AeU0oIiPlMnBq'],
  ['anthropic-admin-key', 'sk-ant-admin01-Qm7kP2zLx9Wv4TbN8cRd1YhJ3kGs6AeU0oIi'],
  ['slack-token', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'],
  ['slack-token', 'xoxp-1234567890-1234567890-1234567890123-0123456789abcdef0123456789abcdef'],
];

test('provider keys users carry (AWS, Groq, Fireworks, xAI, Together, Anthropic admin, Slack) are redacted and detected', () => {
  for (const [label, key] of MORE_KEYS) {
    const text = `export KEY=${key}\nconfig = {"token": "${key}"}`;
    const report: Redaction[] = [];
    const out = redactText(text, { report });
    assert.ok(!out.includes(key), `${label}: ${out}`);
    assert.deepEqual(report.map((r) => r.label), [label, label], key);
    assert.equal(containsSecret(text), true, `containsSecret sees ${label}`);
    assert.equal(containsSecret(out), false, `nothing left after redacting ${label}`);
  }
});

test('the value of an "api_key" / "apiKey" JSON member is redacted, also inside an escaped JSON string', () => {
  const key = 'a1b2c3d4e5f6a7b8c9d0e1f2';
  for (const text of [
    `{"api_key": "${key}"}`,
    `{"apiKey":"${key}","baseURL":"https://api.example.com"}`,
    `{"API_KEY" : "${key}"}`,
    `{"x-api-key": "${key}"}`,
    JSON.stringify({ role: 'tool', content: JSON.stringify({ provider: { apiKey: key } }) }),
  ]) {
    const out = redactText(text);
    assert.ok(!out.includes(key), out);
    assert.match(out, /\[REDACTED:api-key-value\]/);
    assert.equal(containsSecret(text), true, text);
    assert.equal(containsSecret(out), false, out);
  }
  assert.equal(redactText(`{"apiKey": "${key}"}`), '{"apiKey": "[REDACTED:api-key-value]"}', 'the member name stays');
});

test('same-length masking keeps the "apiKey" member name and the JSON valid', () => {
  const body = `{"apiKey": "a1b2c3d4e5f6a7b8c9d0e1f2", "fw": "fw_3ZkQp9LxWv2mTbN8cRd7YhJs"}`;
  const masked = maskSecrets(body);
  assert.equal(masked.length, body.length);
  assert.deepEqual(Object.keys(JSON.parse(masked)), ['apiKey', 'fw']);
  assert.match(masked, /^\{"apiKey": "\[REDACTED:api-key-value\]", "fw": "\[REDACTED:fireworks-key\]\*+"\}$/);
  assert.equal(containsSecret(masked), false);
});

test('prose and code that only look like the prefixes are left alone', () => {
  const samples = [
    'The fw_update_firmware() call and gsk_test fixtures run before xai-grok-beta is chosen.',
    'Slack bot tokens start with xoxb- followed by numbers; see the xoxp- docs.',
    'AKIA prefixes mark AWS access keys; ASIAN markets and AKIAPOLYMERASE are words, AKIA123 is too short.',
    'const apiKey = process.env.OPENAI_API_KEY; // {"apiKey": "YOUR_API_KEY_HERE"}',
    '{"provider": {"openrouter": {"options": {"apiKey": "{env:OPENROUTER_API_KEY}"}}}}',
    '{"api_key": "short1"} and {"apiKey": "not a key at all, 123 words"}',
    'def fw_calibrate_sensor_array_2(): return tgp_v1 or fw_',
    'Use tgp_v1_ as the prefix; xai-org/grok-1 is a repository.',
  ];
  for (const text of samples) {
    assert.equal(redactText(text), text, text);
    assert.equal(containsSecret(text), false, text);
  }
});

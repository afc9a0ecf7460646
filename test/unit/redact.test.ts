import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containsSecret, maskSecrets, redactHeaders, redactText, redactUrl, redactUrlsIn, type Redaction } from '../../src/core/redact';

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
    assert.deepEqual(
      report.map((r) => r.label),
      [label, label],
      key,
    );
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

test('redactUrl: userinfo and every credential-named query parameter, readable or percent-encoded; redactUrlsIn finds URLs in a line', () => {
  const url =
    'https://alice:pw-c4n4ry@h.example/api?key=c4n4ry1&api_key=c4n4ry2&apikey=c4n4ry3&token=c4n4ry4&access_token=c4n4ry5&secret=c4n4ry6&password=c4n4ry7&sig=c4n4ry8&X-Amz-Signature=c4n4ry9&auth=c4n4ryA&alt=sse&max_tokens=5';
  const shown = redactUrl(url, {}, { readable: true });
  assert.doesNotMatch(shown, /c4n4ry/);
  assert.match(shown, /^https:\/\/\[REDACTED:url-userinfo\]@h\.example\/api\?key=\[REDACTED:url-credential\]&/);
  assert.match(shown, /&alt=sse&max_tokens=5$/, 'other parameters stay readable');
  const stored = redactUrl(url);
  assert.doesNotMatch(stored, /c4n4ry/);
  assert.equal(new URL(stored).searchParams.get('key'), '[REDACTED:query-key]', 'a stored URL still parses');
  assert.equal(redactUrl(shown, {}, { readable: true }), shown, 'idempotent');
  const line = redactUrlsIn('could not reach http://u:p4ss@10.0.0.2:8000/v1?token=c4n4ry (ECONNREFUSED); see https://docs.example/x');
  assert.equal(
    line,
    'could not reach http://[REDACTED:url-userinfo]@10.0.0.2:8000/v1?token=[REDACTED:url-credential] (ECONNREFUSED); see https://docs.example/x',
  );
});

test('URL credentials in any text (a body, an error line) are redacted and masked too', () => {
  const text = 'GET https://h.example/v1?alt=sse&key=c4n4ryValue and git clone https://x-access-token:c4n4ryPat@github.com/o/r';
  assert.equal(
    redactText(text),
    'GET https://h.example/v1?alt=sse&key=[REDACTED:url-credential] and git clone https://[REDACTED:url-userinfo]@github.com/o/r',
  );
  const masked = maskSecrets(text);
  assert.equal(masked.length, text.length);
  assert.doesNotMatch(masked, /c4n4ry/);
  assert.equal(containsSecret(text), true);
  assert.equal(containsSecret(masked), false);
  assert.equal(
    redactText('ssh://git@github.com/o/r.git and https://example.com/?q=1'),
    'ssh://git@github.com/o/r.git and https://example.com/?q=1',
    'a plain user name or query stays',
  );
});

test('a key written with \\u escapes is found in that spelling: redacted, masked over its escaped bytes, detected', () => {
  const key = 'sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
  // Some characters as `\u00XX` escapes (JSON allows any character so): in the middle, and the prefix's first.
  const spell = (at: number[]) =>
    [...key].map((c, i) => (at.includes(i) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('');
  const escaped = spell([9, 10, 20]);
  const prefixEscaped = spell([0]);
  for (const spelling of [escaped, prefixEscaped]) {
    const body = `{"messages":[{"role":"user","content":"my key is ${spelling} ok"}]}`;
    assert.equal(JSON.parse(body).messages[0].content, `my key is ${key} ok`, 'the body decodes to the key');
    const out = redactText(body);
    assert.equal(out, '{"messages":[{"role":"user","content":"my key is [REDACTED:openrouter-key] ok"}]}');
    const masked = maskSecrets(Buffer.from(body));
    assert.equal(masked.length, Buffer.byteLength(body));
    const decoded = JSON.parse(masked.toString()).messages[0].content as string;
    assert.ok(!decoded.includes(key.slice(12)) && /^my key is \[REDACTED:openrouter-key\]\*+ ok$/.test(decoded), decoded);
    assert.equal(containsSecret(body), true);
    assert.equal(containsSecret(out), false);
  }
  // An escaped backslash is no escape: `\\u0061` is a backslash and the text u0061.
  const literal = '{"content":"path C:\\\\u0061bc and nothing else"}';
  assert.equal(redactText(literal), literal);
});

test('secret-named fields echoed in a body are redacted as request headers are: Portkey, AWS session tokens, cookies, authorization', () => {
  const awsToken = 'IQoJb3JpZ2luX2VjEBcaCXVzLWVhc3QtMSJHMEUCIQDc4n4ryAwsS3ss10nT0k3n0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789';
  const echo = JSON.stringify({
    headers: {
      'x-portkey-api-key': 'pk-c4n4ryPortkey0123456789',
      portkey: 'c4n4ryPortkeyWord12345678',
      Authorization: 'Basic YzRuNHJ5OnBhc3N3b3Jk',
      Cookie: 'sid=c4n4ryCookie; theme=dark',
      'set-cookie': ['session=c4n4rySetCookie; Path=/', 'other=c4n4ryOther'],
      aws_session_token: 'short-c4n4ry-0123456789abcdef',
      AWS_SESSION_TOKEN: awsToken,
    },
    credentials: {
      SessionToken: awsToken.replace('IQoJ', 'FwoG').replace('b3JpZ2luX2Vj', 'ZXIvYXdzEBcaDH'),
      SecretAccessKey: 'c4n4rySecretAccessKey/0123456789',
    },
  });
  const tool = JSON.stringify({ role: 'tool', content: echo });
  const lines =
    'HTTP/1.1 200 OK\r\nset-cookie: sid=c4n4ryLine\r\n> Authorization: Bearer c4n4ryBearer0123456789\nx-api-key: c4n4ryApiKeyLine0123456789\n';
  for (const text of [echo, tool, lines]) {
    const out = redactText(text);
    assert.doesNotMatch(out, /c4n4ry|YzRuNHJ5|IQoJb3Jp|FwoGZXIv/, out);
    const masked = maskSecrets(text);
    assert.equal(masked.length, text.length);
    assert.doesNotMatch(masked, /c4n4ry|YzRuNHJ5|IQoJb3Jp|FwoGZXIv/, masked);
    if (text !== lines) assert.doesNotThrow(() => JSON.parse(masked), 'masking keeps the JSON valid');
    assert.equal(containsSecret(text), true);
    assert.equal(containsSecret(out), false, out);
    assert.equal(containsSecret(masked), false, masked);
  }
  assert.equal(redactText(`export AWS_SESSION_TOKEN=${awsToken}`), 'export AWS_SESSION_TOKEN=[REDACTED:aws-session-token]');
});

test('data that only looks secret-named stays: logprob tokens, tool arguments named key, cache keys, signatures, code', () => {
  const samples = [
    '{"logprobs":{"content":[{"token":"Hello","logprob":-0.1,"top_logprobs":[{"token":" world1234567890123","logprob":-2}]}]}}',
    '{"name":"set_config","arguments":"{\\"key\\":\\"theme_color_2024_dark_mode\\",\\"value\\":\\"dark\\"}"}',
    '{"prompt_cache_key":"user-123-session-456789","session_id":"abc123def456","idempotency_key":"0123456789abcdef0123"}',
    '{"type":"thinking","thinking":"...","signature":"EqQBCgIYAhIMc4n4ryS1gnatur3xyz0123456789"}',
    'interface User {\n  password: string;\n  secret: z.string().min(8),\n  authorization?: string;\n  cookie: req.headers.cookie,\n}',
    '{"api_key": {"type": "string", "description": "Your API key"}, "password": {"type": "string"}}',
    '{"secretName": "db-creds", "secret": "the cake is a lie", "author": "Alice Smith"}',
    'Set OPENAI_API_KEY=$OPENAI_API_KEY or API_KEY=YOUR_API_KEY_HERE first.',
  ];
  for (const text of samples) {
    assert.equal(redactText(text), text, text);
    assert.equal(maskSecrets(text), text, text);
    assert.equal(containsSecret(text), false, text);
  }
});

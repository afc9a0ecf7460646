// The real healthy recordings (shared/recordings): checks must not raise a single error on them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { formats } from '../../../src/core/families/index';
import { normalizeRequest, parseResponseBody } from '../../../src/core/wire/index';
import { RECORDINGS, recording } from '../../helpers/shared';

for (const name of RECORDINGS) {
  test(`${name}: no error-level finding`, (t) => {
    const r = recording(name);
    if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
    const body = r.files['response.json'] ?? r.files['stream.sse'];
    assert.ok(body, 'recording has a response');
    const request = r.files['request.json'] ? normalizeRequest(JSON.parse(r.files['request.json'])) : undefined;
    const response = parseResponseBody(body);
    const a = analyze({ response, request });
    const errors = a.findings.filter((f) => f.severity === 'error');
    assert.deepEqual(errors, [], errors.map((f) => `${f.rule}: ${f.message}`).join('\n'));
    // Nothing above info either: these are the exchanges a user should see as clean.
    assert.deepEqual(
      a.findings.filter((f) => f.severity === 'warning'),
      [],
    );
    if (JSON.parse(r.files['label.json'] ?? '{}').family === 'kimi-k2') assert.equal(a.family, 'kimi-k2');
  });
}

test('17 (Moonshot AI via OpenRouter, id "weather:0"): only the bare-id note', (t) => {
  const r = recording('17-kimi-fantasy-openrouter-tool-json');
  if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
  const a = analyze({
    response: parseResponseBody(r.files['response.json']),
    request: normalizeRequest(JSON.parse(r.files['request.json'])),
  });
  assert.deepEqual(
    a.findings.map((f) => [f.rule, f.severity]),
    [['kimi-call-id', 'info']],
  );
});

test('each healthy turn, rendered in every family and linted as raw text, has no error either', (t) => {
  const r = recording('17-kimi-fantasy-openrouter-tool-json');
  if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
  const message = parseResponseBody(r.files['response.json']).message;
  const turns = [
    message,
    { reasoning: 'The user wants the weather.', content: 'Checking.', toolCalls: message.toolCalls },
    { content: 'Oi!', toolCalls: [] },
  ];
  for (const format of formats) {
    for (const m of turns) {
      const text = format.render(m).text;
      const a = analyze({ nativeText: text, family: format.id, request: normalizeRequest(JSON.parse(r.files['request.json'])) });
      const bad = a.findings.filter((f) => f.severity !== 'info');
      assert.deepEqual(bad, [], `${format.id}: ${JSON.stringify(text)}\n${bad.map((f) => `${f.rule}: ${f.message}`).join('\n')}`);
    }
  }
});

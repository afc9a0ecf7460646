// Real recorded tool-call turns (shared/recordings), continued the way an agent continues them: the assistant turn
// sent back with its reasoning and calls, each call answered, a closing answer and a new user message. The
// request-side rules must find nothing in such a history; the same history broken on purpose must be caught.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRequest } from '../../../src/core/analyze';
import { normalizeRequest, parseResponseBody } from '../../../src/core/wire/index';
import { RECORDINGS, recording } from '../../helpers/shared';

type Body = { model: string; messages: Record<string, unknown>[]; [k: string]: unknown };

/** The recording's request continued with its own response turn, or undefined when the recording has no tool call. */
function continued(name: string): Body | undefined {
  const r = recording(name);
  if (!r || !r.files['request.json']) return undefined;
  const body = JSON.parse(r.files['request.json']) as Body;
  const raw = r.files['response.json'] ?? r.files['stream.sse'];
  const res = parseResponseBody(raw, {
    path: '/v1/chat/completions',
    contentType: r.files['stream.sse'] ? 'text/event-stream' : 'application/json',
  });
  const m = res.message;
  if (m.toolCalls.length === 0) return undefined;
  const assistant: Record<string, unknown> = {
    role: 'assistant',
    content: m.content ?? '',
    tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
  };
  if (m.reasoning !== undefined) assistant.reasoning = m.reasoning;
  return {
    ...body,
    messages: [
      ...body.messages,
      assistant,
      ...m.toolCalls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: '{"temperature": 21, "sky": "clear"}' })),
      { role: 'assistant', content: 'It is 21 °C and clear in Florence.' },
      { role: 'user', content: 'And tomorrow?' },
    ],
  };
}

const lint = (body: object) => analyzeRequest({ request: normalizeRequest(body, { path: '/v1/chat/completions' }) }).analysis.findings;
const REQUEST_RULES = /^history-/;

for (const name of RECORDINGS) {
  test(`${name}: the recorded request and its continuation carry no history finding`, (t) => {
    const r = recording(name);
    if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
    if (r.files['request.json'])
      assert.deepEqual(
        lint(JSON.parse(r.files['request.json'])).filter((f) => REQUEST_RULES.test(f.rule)),
        [],
      );
    const body = continued(name);
    if (!body) return t.skip('no tool call in this recording to continue');
    // history-kimi-ids notes bare `NAME:IDX` ids (what OpenRouter returns) at info level: that is no defect.
    assert.deepEqual(
      lint(body).filter((f) => f.severity !== 'info'),
      [],
    );
  });
}

test('the Kimi K2.5 recording continued without its reasoning, or with a user message before the result, is caught', (t) => {
  const body = continued('18-kimi-fantasy-openrouter-tool-stream');
  if (!body) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
  const i = body.messages.findIndex((m) => m.role === 'assistant' && m.tool_calls);
  assert.ok(
    typeof body.messages[i].reasoning === 'string' && (body.messages[i].reasoning as string).length > 0,
    'the recorded turn has reasoning',
  );

  const stripped = structuredClone(body);
  delete stripped.messages[i].reasoning;
  assert.deepEqual(
    lint(stripped).map((f) => f.rule),
    ['history-reasoning-missing'],
  );

  const reordered = structuredClone(body);
  reordered.messages.splice(i + 1, 0, { role: 'user', content: 'quick, please' });
  assert.deepEqual(
    lint(reordered).map((f) => f.rule),
    ['history-tool-order'],
  );

  const lost = structuredClone(body);
  lost.messages.splice(i + 1, 1);
  assert.deepEqual(
    lint(lost).map((f) => f.rule),
    ['history-tool-result-missing'],
  );
});

// The request-side rules on a captured exchange: the findings sit on the exchange that carried the bad request (what
// `show`, the Problems panel and the captures tree read), beside the provider's own 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeExchange } from '../../../src/core/analyze';
import type { CapturedExchange } from '../../../src/core/model';

const call = (id: string) => ({ id, type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } });

test('a DeepSeek exchange refused with a 400 carries the history-tool-order finding that explains it', () => {
  const requestBody = JSON.stringify({
    model: 'deepseek-chat',
    messages: [
      { role: 'user', content: 'list files' },
      { role: 'assistant', content: '', tool_calls: [call('call_00_a'), call('call_01_b')] },
      { role: 'tool', tool_call_id: 'call_00_a', content: 'a b' },
      { role: 'user', content: 'and the hidden ones' },
      { role: 'tool', tool_call_id: 'call_01_b', content: '.git' },
    ],
  });
  const exchange: CapturedExchange = {
    id: 'x1',
    sessionId: 's1',
    startedAt: 0,
    state: 'complete',
    route: 'deepseek',
    upstreamUrl: 'https://api.deepseek.com/chat/completions',
    method: 'POST',
    path: '/chat/completions',
    requestHeaders: {},
    requestBody,
    status: 400,
    responseHeaders: { 'content-type': 'application/json' },
  };
  const reply = {
    error: {
      message: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_request_error',
    },
  };
  const { analysis, summary } = analyzeExchange(exchange, new TextEncoder().encode(JSON.stringify(reply)));
  const order = analysis.findings.find((f) => f.rule === 'history-tool-order');
  assert.ok(order, JSON.stringify(analysis.findings));
  assert.equal(order.location, 'request.messages[4]');
  assert.match(order.message, /"call_01_b" .* the user message at request\.messages\[3\] comes between/);
  assert.ok(summary.rules.includes('history-tool-order'));
  assert.ok(summary.rules.includes('upstream-error'));
  assert.ok(summary.counts.error >= 2);
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import historyEchoedMarkers from '../../../src/core/checks/history-echoed-markers';
import { OPENCODE_37297_ARGS, call, request, response, run } from './helpers';

const ok = response({ message: { content: 'Done.' }, finishReason: 'stop' });

describe('history-echoed-markers', () => {
  test("OpenCode #37297: the invalid-tool error quotes the model's control tokens back, and so does the assistant turn", () => {
    const req = request(
      [{ name: 'read' }],
      [
        { role: 'system', content: 'You are OpenCode.' },
        { role: 'user', content: 'open the app' },
        { role: 'assistant', toolCalls: [call('read', OPENCODE_37297_ARGS, 'functions.read:2')] },
        {
          role: 'tool',
          toolCallId: 'functions.read:2',
          content: `The read tool was called with invalid arguments: ${OPENCODE_37297_ARGS}`,
        },
      ],
    );
    const f = run(historyEchoedMarkers, { response: ok, request: req }).findings;
    assert.deepEqual(
      f.map((x) => x.location),
      ['request.messages[2].tool_calls[0].arguments', 'request.messages[3].content'],
    );
    assert.equal(f[1].severity, 'warning');
    assert.match(f[1].message, /tool message 3 .* 3 Kimi K2 control markers .*<\|tool_calls_section_begin\|>/);
  });

  test('system prompts that document a format, clean histories and no request are silent', () => {
    const req = request(
      [],
      [
        { role: 'system', content: 'Tool calls look like <|tool_calls_section_begin|>…<|tool_calls_section_end|>.' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Oi!' },
      ],
    );
    assert.deepEqual(run(historyEchoedMarkers, { response: ok, request: req }).findings, []);
    assert.deepEqual(run(historyEchoedMarkers, { response: ok }).findings, []);
  });
});

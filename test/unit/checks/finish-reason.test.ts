import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import finishReasonMismatch from '../../../src/core/checks/finish-reason-mismatch';
import { FIREWORKS_LEAK, OPENCODE_1021, OPENCODE_8851_REASONING, call, response, run } from './helpers';

const finding = (fields: Parameters<typeof response>[0]) => run(finishReasonMismatch, { response: response(fields) }).findings;
const read = call('read', '{"filePath":"a"}', 'functions.read:0');

describe('finish-reason-mismatch', () => {
  test('tool_calls without any call: the agent waits for nothing', () => {
    const f = finding({ finishReason: 'tool_calls', message: { content: '' } });
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.equal(f[0].location, 'finish_reason');
    assert.match(f[0].message, /no tool call/);
  });

  test('tool_calls while the call is stuck as markup in content', () => {
    assert.match(finding({ finishReason: 'tool_calls', message: { content: FIREWORKS_LEAK } })[0].message, /stuck as markup in content/);
  });

  test('stop with leaked calls (Fireworks, finish "stop"; OpenCode #8851 in reasoning) names the provider value', () => {
    const f = finding({
      finishReason: 'stop',
      nativeFinishReason: 'eos',
      message: { content: FIREWORKS_LEAK, reasoning: OPENCODE_8851_REASONING },
    });
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.match(
      f[0].message,
      /finish_reason is stop \(provider: eos\) although the model wrote tool-call markup in reasoning and content \(2 calls\)/,
    );
  });

  test('length in the middle of a call is an error; length elsewhere is info', () => {
    assert.equal(finding({ finishReason: 'length', message: { content: OPENCODE_1021 } })[0].severity, 'error');
    const cutArgs = finding({
      finishReason: 'length',
      message: { toolCalls: [call('write', '{"content": "import', 'functions.write:0')] },
    });
    assert.match(cutArgs[0].message, /middle of a tool call \(write\)/);
    assert.equal(finding({ finishReason: 'length', message: { content: 'A long essay' } })[0].severity, 'info');
  });

  test('structured calls with stop: info only (several healthy providers send it)', () => {
    const f = finding({ finishReason: 'stop', message: { toolCalls: [read] } });
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'info');
  });

  test('consistent finish reasons, a missing finish reason and raw text are silent', () => {
    assert.deepEqual(finding({ finishReason: 'tool_calls', message: { toolCalls: [read] } }), []);
    assert.deepEqual(finding({ finishReason: 'stop', message: { content: 'Oi!' } }), []);
    assert.deepEqual(finding({ message: { content: FIREWORKS_LEAK } }), []);
    assert.deepEqual(run(finishReasonMismatch, { nativeText: FIREWORKS_LEAK }).findings, []);
  });
});

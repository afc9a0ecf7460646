import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import kimiCallId from '../../../src/core/checks/kimi-call-id';
import historyKimiIds from '../../../src/core/checks/history-kimi-ids';
import malformedCall from '../../../src/core/checks/malformed-call';
import { kimiIdShape } from '../../../src/core/families/kimi-k2/grammar';
import type { ToolCall } from '../../../src/core/model';
import { FIREWORKS_LEAK, K, KIMI, call, request, response, run, slice } from './helpers';

const ids = (...calls: ToolCall[]) =>
  run(kimiCallId, { response: response({ message: { toolCalls: calls }, finishReason: 'tool_calls' }) }).findings;

describe('kimi-id shapes', () => {
  test('canonical, bare, malformed and foreign ids', () => {
    assert.deepEqual(kimiIdShape('functions.read:3'), { kind: 'canonical', name: 'read', index: 3 });
    assert.deepEqual(kimiIdShape('weather:0'), { kind: 'bare', name: 'weather', index: 0 });
    for (const id of ['functions_read_1', 'functionsexec5', 'functions.read', 'functions.read:x'])
      assert.equal(kimiIdShape(id).kind, 'malformed', id);
    for (const id of ['call_9a0a', 'toolu_01KFbKqPYSuAKujiL6mTfzYA', 'mvVq65j66dyGRizURhbdNCEnSO56GhXx'])
      assert.equal(kimiIdShape(id).kind, 'foreign', id);
  });
});

describe('kimi-call-id', () => {
  test("K2's off-format ids `functions_read_1` and `functionsexec5` are errors", () => {
    const f = ids(call('read', '{}', 'functions_read_1'), call('exec', '{}', 'functionsexec5', 1));
    assert.deepEqual(
      f.map((x) => x.severity),
      ['error', 'error'],
    );
    assert.match(f[0].message, /"functions_read_1", not functions\.NAME:IDX/);
    assert.equal(f[1].location, 'tool_calls[1].id');
  });

  test('an id naming another tool is an error', () => {
    const f = ids(call('read', '{}', 'functions.write:0'));
    assert.equal(f.length, 1);
    assert.match(f[0].message, /names "write", but the call is to "read"/);
  });

  test('each finding points at its own call id, in a turn of many calls', () => {
    // Segments are looked up per call from an index built once per turn (a 5,000-call turn used to take seconds).
    const calls = Array.from({ length: 300 }, (_, i) => call('read', '{}', i % 100 === 7 ? `read:${i}` : `functions.read:${i}`, i));
    const r = run(kimiCallId, { response: response({ message: { toolCalls: calls }, finishReason: 'tool_calls' }) });
    const findings = r.findings;
    assert.deepEqual(
      findings.map((f) => f.location),
      ['tool_calls[7].id', 'tool_calls[107].id', 'tool_calls[207].id'],
    );
    // The reconstruction keeps each bare id as sent, at that call's own place.
    for (const f of findings) assert.equal(slice(r, f), `read:${/\d+/.exec(f.location)![0]}`);
  });

  test('a reconstruction underlines the id the provider sent, or nothing when it cannot hold it', () => {
    // Recording 17 (Moonshot AI via OpenRouter): the message names "weather:0", so must the underlined text.
    const bare = run(kimiCallId, {
      response: response({ message: { toolCalls: [call('weather', '{}', 'weather:0')] }, finishReason: 'tool_calls' }),
    });
    assert.match(bare.findings[0].message, /"weather:0"/);
    assert.equal(slice(bare, bare.findings[0]), 'weather:0');
    // A server's `call_…` id, or one naming another tool, is not in the rendered markup: no range points elsewhere.
    for (const id of ['call_9a0a', 'functions.write:0', 'functions_read_1']) {
      const r = run(kimiCallId, { response: response({ message: { toolCalls: [call('read', '{}', id)] }, finishReason: 'tool_calls' }) });
      assert.equal(r.findings.length, 1, id);
      assert.equal(r.findings[0].start, undefined, id);
      assert.equal(r.findings[0].end, undefined, id);
    }
  });

  test('the Fireworks leak: malformed-call already names the id, kimi-call-id stays silent', () => {
    assert.deepEqual(run(kimiCallId, { nativeText: FIREWORKS_LEAK, model: KIMI }).findings, []);
    assert.match(
      run(malformedCall, { nativeText: FIREWORKS_LEAK, model: KIMI }).findings[0].message,
      /id 'channel_reply:0' lacks the functions\. prefix/,
    );
    // A bare id in a well-formed section is still noted.
    const sectioned = `${K.SECTION_BEGIN}${K.CALL_BEGIN}channel_reply:0${K.ARG_BEGIN}{}${K.CALL_END}${K.SECTION_END}`;
    assert.deepEqual(
      run(kimiCallId, { nativeText: sectioned, model: KIMI }).findings.map((f) => f.severity),
      ['info'],
    );
  });

  test('healthy OpenRouter traffic: bare `weather:0` is info only, `call_…` warns, repeated ids are errors', () => {
    assert.deepEqual(
      ids(call('weather', '{}', 'weather:0')).map((x) => x.severity),
      ['info'],
    );
    assert.deepEqual(
      ids(call('weather', '{}', 'call_9a0a')).map((x) => x.severity),
      ['warning'],
    );
    const dup = ids(call('read', '{}', 'functions.read:0'), call('read', '{}', 'functions.read:0', 1));
    assert.equal(dup.length, 1);
    assert.match(dup[0].message, /reuses id "functions\.read:0" of call 0/);
  });

  test('in raw text the finding points at the id', () => {
    const text = `${K.SECTION_BEGIN}${K.CALL_BEGIN}functions_read_1${K.ARG_BEGIN}{}${K.CALL_END}${K.SECTION_END}`;
    const r = run(kimiCallId, { nativeText: text, model: KIMI });
    assert.equal(r.findings.length, 1);
    assert.equal(slice(r, r.findings[0]), 'functions_read_1');
  });

  test('canonical ids and other families are silent', () => {
    assert.deepEqual(ids(call('read', '{}', 'functions.read:0'), call('bash', '{}', 'functions.bash:1', 1)), []);
    const qwen = response({ model: 'acme/other-model', message: { toolCalls: [call('read', '{}', 'functions_read_1')] } });
    assert.deepEqual(run(kimiCallId, { response: qwen }).findings, []);
  });
});

describe('history-kimi-ids', () => {
  const history = (...idList: string[]) =>
    request(
      [{ name: 'read' }],
      [
        { role: 'user', content: 'read a and b' },
        ...idList.flatMap((id, i) => [
          { role: 'assistant', toolCalls: [call('read', '{"filePath":"a"}', id, 0)] },
          { role: 'tool', toolCallId: id, content: `file ${i}` },
        ]),
      ],
    );
  const ok = response({ message: { content: 'Done.' }, finishReason: 'stop' });

  test('foreign ids from another model in the history warn (Kimi-K2 #128), naming the first', () => {
    const r = run(historyKimiIds, { response: ok, request: history('call_9a0a', 'call_72e6b5890385469d9a5c17') });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'warning');
    assert.equal(r.findings[0].location, 'request.messages[1].tool_calls[0].id');
    assert.match(
      r.findings[0].message,
      /2 tool-call ids in the request history are not functions\.NAME:IDX \("call_9a0a", "call_72e6b5890385469d9a5c17"\)/,
    );
  });

  test('a per-turn counter that restarts at 0 repeats ids (llxprt-code #712)', () => {
    const r = run(historyKimiIds, { response: ok, request: history('functions.read:0', 'functions.read:0') });
    assert.equal(r.findings.length, 1);
    assert.match(r.findings[0].message, /^1 tool-call id in the request history repeats an earlier one/);
  });

  test('bare ids are info; canonical ids and non-Kimi models are silent', () => {
    const bare = run(historyKimiIds, { response: ok, request: history('weather:0') }).findings[0];
    assert.equal(bare.severity, 'info');
    assert.match(bare.message, /^1 tool-call id in the request history lacks the functions\. prefix/, 'one id: the verb agrees');
    assert.match(
      run(historyKimiIds, { response: ok, request: history('weather:0', 'weather:1') }).findings[0].message,
      /^2 tool-call ids in the request history lack the/,
    );
    assert.deepEqual(run(historyKimiIds, { response: ok, request: history('functions.read:0', 'functions.read:1') }).findings, []);
    const other = response({ model: 'acme/other-model', message: { content: 'Done.' } });
    assert.deepEqual(run(historyKimiIds, { response: other, request: { ...history('call_1'), model: 'acme/other-model' } }).findings, []);
  });
});

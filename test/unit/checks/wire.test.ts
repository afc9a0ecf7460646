import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import streamUnterminated from '../../../src/core/checks/stream-unterminated';
import upstreamError from '../../../src/core/checks/upstream-error';
import wireInvalidJson from '../../../src/core/checks/wire-invalid-json';
import wireUnexpectedEvent from '../../../src/core/checks/wire-unexpected-event';
import emptyResponse from '../../../src/core/checks/empty-response';
import { parseResponseBody } from '../../../src/core/wire/index';
import { response, run } from './helpers';

const chunk = (delta: object, extra: object = {}) =>
  `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', model: 'moonshotai/kimi-k2-0905', provider: 'Chutes', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
const HEALTHY = `: OPENROUTER PROCESSING\n\n${chunk({ role: 'assistant', content: 'Oi!' })}${chunk({}, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}data: [DONE]\n\n`;
const sse = (body: string) => run(streamUnterminated, { response: parseResponseBody(body) });

describe('stream-unterminated', () => {
  test('an SSE stream cut before [DONE]', () => {
    const f = sse(chunk({ role: 'assistant', content: 'I will read' })).findings;
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.equal(f[0].location, 'wire');
    assert.match(f[0].message, /without its terminal event after 1 event/);
  });

  test('a complete stream is silent', () => {
    assert.deepEqual(sse(HEALTHY).findings, []);
  });

  test('a last event cut off with the stream is one finding, naming the event once', () => {
    const body = `${chunk({ role: 'assistant', content: 'I will' })}${chunk({ content: ' read the file' }).slice(0, 60)}`;
    const r = parseResponseBody(body);
    const findings = [...run(streamUnterminated, { response: r }).findings, ...run(wireInvalidJson, { response: r }).findings];
    assert.equal(findings.length, 1);
    assert.equal(findings[0].rule, 'stream-unterminated');
    assert.equal(findings[0].message.match(/event 1\b/g)?.length, 1, findings[0].message);
    assert.match(findings[0].message, /the last event \(event 1, byte \d+\) is cut off mid-JSON\.$/);
  });
});

describe('upstream-error', () => {
  test("OpenRouter's mid-stream error event names the upstream message and provider", () => {
    const body =
      chunk({ role: 'assistant', content: 'Partial' }) +
      `data: ${JSON.stringify({ id: 'cmpl-abc123', object: 'chat.completion.chunk', provider: 'openai', error: { code: 'server_error', message: 'Provider disconnected unexpectedly' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] })}\n\n`;
    const f = run(upstreamError, { response: parseResponseBody(body) }).findings;
    assert.equal(f.length, 1);
    assert.match(f[0].message, /server_error: Provider disconnected unexpectedly/);
  });

  test('an error body (HTTP 200 with {"error": …})', () => {
    const f = run(upstreamError, { response: parseResponseBody('{"error":{"code":502,"message":"Provider returned error"}}') }).findings;
    assert.equal(f.length, 1);
    assert.match(f[0].message, /502: Provider returned error/);
  });

  test('a JSON error body is the HTTP answer, not a stream event', () => {
    const atlas = '{"error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"AtlasCloud"}}}';
    const chat = parseResponseBody(atlas, { path: '/api/v1/chat/completions' });
    assert.deepEqual(
      run(upstreamError, { response: chat }).findings.map((f) => f.message),
      ['The upstream answered HTTP 502: Provider returned error (provider AtlasCloud)'],
    );
    // Outside a chat endpoint too, and the capture's HTTP status wins over the body's code.
    const models = parseResponseBody('{"error":{"code":"model_not_found","message":"No such model"}}');
    models.status = 404;
    assert.deepEqual(
      run(upstreamError, { response: models }).findings.map((f) => f.message),
      ['The upstream answered HTTP 404: model_not_found: No such model'],
    );
    chat.status = 200;
    assert.deepEqual(
      run(upstreamError, { response: chat }).findings.map((f) => f.message),
      ['The upstream answered HTTP 200 with an error body: 502: Provider returned error (provider AtlasCloud)'],
    );
  });

  test("OpenRouter's mid-stream error, then the end without [DONE]: the error alone explains it", () => {
    const body =
      chunk({ role: 'assistant', content: 'Partial' }) +
      `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', provider: 'Chutes', error: { code: 502, message: 'Upstream stream dropped' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] })}\n\n`;
    const r = parseResponseBody(body);
    assert.equal(r.terminated, false);
    assert.deepEqual(run(streamUnterminated, { response: r }).findings, []);
    const f = run(upstreamError, { response: r }).findings;
    assert.equal(f.length, 1);
    assert.match(f[0].message, /^The stream carried an error event from Chutes \(event 1, byte \d+\): 502: Upstream stream dropped$/);
  });

  test('a healthy stream is silent', () => {
    assert.deepEqual(run(upstreamError, { response: parseResponseBody(HEALTHY) }).findings, []);
  });
});

// OpenRouter reports a generation error inside the choice it ends with finish_reason "error" (choices[].error), in a
// JSON body and mid-stream (/work/shared/reference/wire-formats.md §1.4, §1.6).
describe('upstream-error: the error inside the choice', () => {
  const choiceError = {
    code: 502,
    message: 'Upstream error from Chutes: model overloaded\n\u001b[31mretry\u001b[0m',
    metadata: { provider_name: 'Chutes' },
  };

  test('a JSON body with choices[0].error and finish_reason "error": an error finding with the provider and its message', () => {
    const body = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion',
      model: 'moonshotai/kimi-k2-0905',
      choices: [
        {
          index: 0,
          finish_reason: 'error',
          native_finish_reason: 'error',
          message: { role: 'assistant', content: '' },
          error: choiceError,
        },
      ],
    });
    const r = parseResponseBody(body, { path: '/api/v1/chat/completions' });
    assert.equal(r.error?.message.startsWith('Upstream error from Chutes'), true);
    const f = run(upstreamError, { response: r }).findings;
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    // The text as sent: the readers (lint, show, the extension) escape it for display.
    assert.equal(f[0].message, `The upstream ended the turn with finish_reason error: 502: ${choiceError.message} (provider Chutes)`);
  });

  test('a stream whose last chunk carries the error inside the choice only', () => {
    const body =
      chunk({ role: 'assistant', content: 'Partial' }) +
      `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', provider: 'Chutes', choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', error: { code: 'server_error', message: 'Provider disconnected' } }] })}\n\n`;
    const f = run(upstreamError, { response: parseResponseBody(body) }).findings;
    assert.equal(f.length, 1);
    assert.match(
      f[0].message,
      /^The stream carried an error event from Chutes \(event 1, byte \d+\): server_error: Provider disconnected$/,
    );
  });

  test('finish_reason "error" with no error object anywhere is still an error', () => {
    const body = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion',
      model: 'moonshotai/kimi-k2-0905',
      choices: [{ index: 0, finish_reason: 'error', message: { role: 'assistant', content: 'Par' } }],
    });
    const f = run(upstreamError, { response: parseResponseBody(body) }).findings;
    assert.equal(f.length, 1);
    assert.match(f[0].message, /finish_reason error .*no error message/);
  });

  test('an error in the choice beside a top-level one is reported once', () => {
    const body = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion',
      error: { code: 502, message: 'Provider returned error' },
      choices: [{ index: 0, finish_reason: 'error', message: { role: 'assistant', content: '' }, error: choiceError }],
    });
    const r = parseResponseBody(body);
    assert.equal(r.wireIssues.filter((w) => w.code === 'error-event').length, 1);
    assert.equal(run(upstreamError, { response: r }).findings.length, 1);
  });
});

describe('wire-invalid-json', () => {
  test('an event whose data is not JSON', () => {
    const f = run(wireInvalidJson, {
      response: parseResponseBody(`${chunk({ content: 'a' })}data: {"id":"gen-1","choices":[{"delta":{"content":"b\n\ndata: [DONE]\n\n`),
    }).findings;
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.match(f[0].message, /event 1/);
    assert.equal(f[0].message.match(/event 1\b/g)?.length, 1, f[0].message);
  });

  test('a healthy stream is silent', () => {
    assert.deepEqual(run(wireInvalidJson, { response: parseResponseBody(HEALTHY) }).findings, []);
  });
});

describe('wire-unexpected-event', () => {
  test("reports the wire layer's unexpected-event issues as warnings", () => {
    const r = response({
      wireIssues: [{ code: 'unexpected-event', message: 'content_block_delta for block 3, which never started', eventIndex: 7 }],
    });
    const f = run(wireUnexpectedEvent, { response: r }).findings;
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'warning');
    assert.match(f[0].message, /\(event 7\): content_block_delta for block 3/);
  });

  test('other issues are not its business', () => {
    assert.deepEqual(
      run(wireUnexpectedEvent, { response: response({ wireIssues: [{ code: 'invalid-json', message: 'x' }] }) }).findings,
      [],
    );
  });
});

describe('empty-response', () => {
  test('an empty body is an error', () => {
    const f = run(emptyResponse, { response: parseResponseBody('') }).findings;
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
  });

  test('a finished turn with only reasoning (K2.6 empty <|im_end|> after </think>, Kimi-K2 #128) warns', () => {
    const f = run(emptyResponse, {
      response: response({ finishReason: 'stop', message: { reasoning: 'Let me call the tool.', content: '' } }),
    }).findings;
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'warning');
    assert.match(f[0].message, /only reasoning/);
  });

  test('the same in raw Kimi text: `<|im_end|>` right after `</think>`', () => {
    const f = run(emptyResponse, {
      nativeText: '<think>The user wants the file; I will call read.</think><|im_end|>',
      model: 'moonshotai/kimi-k2.6',
    }).findings;
    assert.equal(f.length, 1);
    assert.match(f[0].message, /no content and no tool call \(only reasoning\)\.$/);
  });

  test('plain text of no known family is content, not an empty turn', () => {
    assert.deepEqual(run(emptyResponse, { response: parseResponseBody('hello world') }).findings, []);
  });

  test('content, calls, errors and cut streams are not empty turns', () => {
    assert.deepEqual(run(emptyResponse, { response: response({ finishReason: 'stop', message: { content: 'Oi!' } }) }).findings, []);
    assert.deepEqual(run(emptyResponse, { response: response({ error: { message: 'boom' } }) }).findings, []);
    assert.deepEqual(run(emptyResponse, { response: response({ terminated: false }) }).findings, []);
    assert.deepEqual(run(emptyResponse, { nativeText: '<think>Plan.</think>Oi!<|im_end|>', model: 'moonshotai/kimi-k2.6' }).findings, []);
  });
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, analyzeExchange, parseExchange, prepare, renderPlain, runChecks } from '../../src/core/analyze';
import type { Check } from '../../src/core/checks/types';
import { getFormat } from '../../src/core/families/index';
import type { CapturedExchange } from '../../src/core/model';
import { parseResponseBody } from '../../src/core/wire/index';
import { recording } from '../helpers/shared';
import { FIREWORKS_LEAK, KIMI, OPENCODE_1021, call, kimiSection, request, response } from './checks/helpers';

describe('family choice', () => {
  test('given → response model → request model → caller model → markers → none', () => {
    assert.equal(prepare({ response: response(), family: 'kimi-k2' }).familySource, 'given');
    assert.equal(prepare({ response: response({ model: KIMI }) }).familySource, 'model-id');
    const anon = response({ model: undefined, message: { content: 'Oi!' } });
    assert.equal(prepare({ response: anon, request: request([]) }).familySource, 'model-id');
    assert.equal(prepare({ response: anon, model: KIMI }).familySource, 'model-id');
    const leaked = response({ model: 'acme/other-model', message: { content: FIREWORKS_LEAK } });
    const byMarkers = prepare({ response: leaked });
    assert.equal(byMarkers.familySource, 'markers');
    assert.equal(byMarkers.ctx.format?.id, 'kimi-k2');
    assert.equal(prepare({ response: anon }).familySource, 'none');
  });
});

describe('native text', () => {
  test('raw text is parsed by the family; its segments and calls come from the parse', () => {
    const text = `Reading.${kimiSection()}<|im_end|>`;
    const a = analyze({ nativeText: text, model: KIMI });
    assert.equal(a.native.source, 'raw');
    assert.equal(a.native.text, text);
    assert.equal(a.message.toolCalls[0].name, 'read');
    assert.deepEqual(a.findings, []);
  });

  test('SGLang /generate text counts as raw model output', () => {
    const r = response({ protocol: 'sglang-generate', message: { content: OPENCODE_1021 }, finishReason: 'length' });
    const a = analyze({ response: r });
    assert.equal(a.native.source, 'raw');
    assert.ok(a.findings.some((f) => f.rule === 'section-unclosed'));
    assert.ok(
      a.findings.some((f) => f.rule === 'finish-reason-mismatch' && f.severity === 'error'),
      'length mid-call',
    );
  });

  test('a structured response is rendered with the family: the call sits inside the Kimi section', () => {
    const a = analyze({
      response: response({
        message: { content: 'Reading.', toolCalls: [call('read', '{"filePath":"a"}', 'functions.read:0')] },
        finishReason: 'tool_calls',
      }),
    });
    assert.equal(a.native.source, 'rendered');
    assert.ok(a.native.text.includes('<|tool_calls_section_begin|>'));
    assert.deepEqual(a.findings, []);
  });

  test('without a family the turn is laid out plainly and family-independent checks still run', () => {
    const r = response({
      model: 'acme/other-model',
      message: { reasoning: 'Think.', content: 'Listing.', toolCalls: [call('ls', '{dirPath: "src"}')] },
      finishReason: 'tool_calls',
    });
    const a = analyze({ response: r });
    assert.equal(a.family, undefined);
    assert.equal(a.native.text, 'Think.\n\nListing.\nls {dirPath: "src"}');
    const f = a.findings.find((x) => x.rule === 'args-invalid-json');
    assert.ok(f);
    assert.equal(a.native.text.slice(f.start, f.end), 'd', 'the JSON syntax error is underlined');
  });

  test('plain text of no known family is the content: no empty-response', () => {
    const a = analyze({ response: parseResponseBody('hello world') });
    assert.equal(a.family, undefined);
    assert.deepEqual(a.message, { content: 'hello world', toolCalls: [] });
    assert.deepEqual(a.findings, []);
  });

  test('a stream cut short is rendered as far as it got: no </think> or <|im_end|> the model never sent', (t) => {
    const r = recording('18-kimi-fantasy-openrouter-tool-stream');
    if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
    const sse = r.files['stream.sse'];
    const cut = analyze({ response: parseResponseBody(sse.slice(0, 1500)), model: 'moonshotai/kimi-k2' });
    assert.match(cut.native.text, /^<think>\s*The user is/);
    assert.doesNotMatch(cut.native.text, /<\/think>|<\|im_end\|>/);
    // Cut inside the call's arguments: the call stays open, and its partial JSON is the cut's, not a second finding.
    const mid = analyze({
      response: parseResponseBody(sse.slice(0, sse.indexOf('\n', sse.indexOf('"arguments":"nce"')) + 1)),
      model: 'moonshotai/kimi-k2',
    });
    assert.match(mid.native.text, /<\|tool_call_argument_begin\|>\{"location": "Florence$/);
    assert.deepEqual(
      mid.findings.map((f) => f.rule),
      ['stream-unterminated'],
    );
    // Nothing arrived: nothing is rendered.
    assert.equal(analyze({ response: parseResponseBody('data: {"choices": ['), model: 'moonshotai/kimi-k2' }).native.text, '');
    // The whole stream ends its turn.
    assert.match(
      analyze({ response: parseResponseBody(sse), model: 'moonshotai/kimi-k2' }).native.text,
      /<\|tool_calls_section_end\|><\|im_end\|>$/,
    );
  });

  test('finish_reason length: the turn is rendered without its end marker', () => {
    const a = analyze({ response: response({ message: { content: 'The answer is' }, finishReason: 'length' }) });
    assert.equal(a.native.text, 'The answer is');
  });

  test('renderPlain segments cover exactly what they name', () => {
    const n = renderPlain({ content: 'Hi', toolCalls: [call('a', '{}'), call('b', '{"x":1}', undefined, 1)] });
    const of = (kind: string, i?: number) => n.segments.find((s) => s.kind === kind && s.callIndex === i)!;
    assert.equal(n.text.slice(of('content').start, of('content').end), 'Hi');
    assert.equal(n.text.slice(of('arguments', 1).start, of('arguments', 1).end), '{"x":1}');
    assert.equal(n.text.slice(of('call-name', 0).start, of('call-name', 0).end), 'a');
  });
});

describe('findings', () => {
  test('a check that throws becomes an internal-error finding; the others still report', () => {
    const boom: Check = {
      id: 'boom',
      severity: 'error',
      title: 'Boom',
      why: 'Test.',
      run: () => {
        throw new Error('kaput');
      },
    };
    const fine: Check = {
      id: 'fine',
      severity: 'info',
      title: 'Fine',
      why: 'Test.',
      run: () => [{ rule: 'fine', severity: 'info', message: 'ok', location: 'content' }],
    };
    const out = runChecks(prepare({ response: response() }).ctx, [boom, fine]);
    assert.deepEqual(
      out.map((f) => [f.rule, f.severity]),
      [
        ['internal-error', 'warning'],
        ['fine', 'info'],
      ],
    );
    assert.match(out[0].message, /boom check failed \(kaput\)/);
  });

  test('a format module that throws is reported, and the turn is still analysed without a family', () => {
    const kimi = getFormat('kimi-k2');
    const render = kimi.render;
    kimi.render = () => {
      throw new Error('render exploded');
    };
    try {
      const a = analyze({ response: response({ message: { toolCalls: [call('ls', '{dirPath: "src"}')] }, finishReason: 'tool_calls' }) });
      assert.equal(a.family, undefined);
      assert.ok(a.findings.some((f) => f.rule === 'args-invalid-json'));
      assert.match(a.findings.find((f) => f.rule === 'internal-error')!.message, /render exploded/);
    } finally {
      kimi.render = render;
    }
  });

  test('sorted by position; findings without one come last in rule order', () => {
    const r = response({
      message: { content: FIREWORKS_LEAK, reasoning: 'Plan. <|tool_calls_section_begin|>' },
      finishReason: 'stop',
      wireIssues: [{ code: 'no-terminal-event', message: 'no [DONE]' }],
      terminated: false,
    });
    const a = analyze({ response: r });
    const positioned = a.findings.filter((f) => f.start !== undefined);
    for (let i = 1; i < positioned.length; i++) assert.ok(positioned[i - 1].start! <= positioned[i].start!);
    const tail = a.findings.slice(positioned.length);
    assert.ok(tail.every((f) => f.start === undefined));
    assert.deepEqual(
      tail.map((f) => f.rule),
      ['finish-reason-mismatch', 'stream-unterminated'],
    );
  });
});

describe('analyzeExchange', () => {
  test('parses both bodies and summarizes counts, rules and the served provider', () => {
    const exchange: CapturedExchange = {
      id: 'x1',
      sessionId: 's1',
      startedAt: 0,
      state: 'complete',
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/api/v1/chat/completions',
      requestHeaders: {},
      servedProvider: 'Fireworks',
      requestBody: JSON.stringify({
        model: KIMI,
        messages: [{ role: 'user', content: 'post it' }],
        tools: [{ type: 'function', function: { name: 'channel_reply', parameters: { type: 'object' } } }],
      }),
      responseHeaders: { 'Content-Type': 'application/json' },
    };
    const body = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion',
      model: KIMI,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: FIREWORKS_LEAK } }],
    });
    const { response: res, request: req, analysis, summary } = analyzeExchange(exchange, new TextEncoder().encode(body));
    assert.equal(res.protocol, 'openai-chat');
    assert.equal(req?.tools[0].name, 'channel_reply');
    assert.equal(summary.family, 'kimi-k2');
    assert.equal(summary.provider, 'Fireworks');
    assert.equal(summary.finishReason, 'stop');
    assert.equal(summary.counts.error, analysis.findings.filter((f) => f.severity === 'error').length);
    assert.ok(summary.counts.error >= 2);
    assert.deepEqual(
      summary.rules,
      analysis.findings.map((f) => f.rule),
    );
    assert.ok(summary.rules.includes('markup-in-content'));
  });

  const exchangeOf = (fields: Partial<CapturedExchange>): CapturedExchange => ({
    id: 'x3',
    sessionId: 's',
    startedAt: 0,
    state: 'complete',
    route: 'openrouter',
    upstreamUrl: 'u',
    method: 'POST',
    path: '/openrouter/v1/chat/completions',
    requestHeaders: {},
    status: 200,
    responseHeaders: { 'content-type': 'application/json' },
    ...fields,
  });
  const bytes = (s: string) => new TextEncoder().encode(s);

  test('endpoints that are no model turn (models, embeddings, count_tokens, stored completions) get no turn findings', () => {
    const cases: [Partial<CapturedExchange>, string][] = [
      [{ method: 'GET', path: '/openrouter/v1/models' }, '{"data":[{"id":"moonshotai/kimi-k2"}]}'],
      [{ method: 'GET', path: '/v1/models' }, '{"object":"list","data":[{"id":"qwen3","object":"model"}]}'],
      [
        { path: '/v1/embeddings', requestBody: '{"model":"moonshotai/kimi-k2","input":"hi"}' },
        '{"object":"list","data":[{"object":"embedding","embedding":[0.1],"index":0}]}',
      ],
      [{ path: '/anthropic/v1/messages/count_tokens', requestBody: '{"model":"claude","messages":[]}' }, '{"input_tokens":12}'],
      [{ method: 'GET', path: '/v1/chat/completions' }, '{"object":"list","data":[],"has_more":false}'],
      [{ method: 'GET', path: '/v1/models', responseHeaders: { 'content-type': 'text/plain' } }, '404 page not found'],
    ];
    for (const [fields, body] of cases) {
      const { analysis, summary } = analyzeExchange(exchangeOf(fields), bytes(body));
      assert.deepEqual(analysis.findings, [], `${fields.method ?? 'POST'} ${fields.path}`);
      assert.equal(analysis.native.text, '');
      assert.deepEqual(summary.rules, []);
    }
    // A stored completion fetched by id is a turn, judged by its body.
    const stored = JSON.stringify({
      object: 'chat.completion',
      model: KIMI,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: FIREWORKS_LEAK } }],
    });
    assert.ok(
      analyzeExchange(exchangeOf({ method: 'GET', path: '/v1/chat/completions/chatcmpl-1' }), bytes(stored)).summary.rules.includes(
        'markup-in-content',
      ),
    );
    // The same body read from a capture by `lint ID` (parseExchange, then analyze) is no turn either.
    const { response: models } = parseExchange(exchangeOf({ method: 'GET', path: '/openrouter/v1/models' }), bytes('{"data":[]}'));
    assert.deepEqual(analyze({ response: models }).findings, []);
  });

  test('an upstream error on such an endpoint is still reported, with its HTTP status', () => {
    const { analysis } = analyzeExchange(
      exchangeOf({ method: 'GET', path: '/v1/models', status: 404 }),
      bytes('{"error":{"message":"Not Found","type":"invalid_request_error"}}'),
    );
    assert.deepEqual(
      analysis.findings.map((f) => [f.rule, f.message]),
      [['upstream-error', 'The upstream answered HTTP 404: invalid_request_error: Not Found']],
    );
  });

  const cutStream =
    'data: {"id":"gen-1","object":"chat.completion.chunk","model":"moonshotai/kimi-k2","choices":[{"index":0,"delta":{"content":"I will"}}]}\n\n';

  test('a stream the client closed is a warning that says so, not an error blaming the upstream', () => {
    const error = 'the client closed the connection after 131 bytes';
    const { analysis } = analyzeExchange(
      exchangeOf({ state: 'incomplete', error, responseHeaders: { 'content-type': 'text/event-stream' } }),
      bytes(cutStream),
    );
    assert.deepEqual(
      analysis.findings.map((f) => [f.rule, f.severity]),
      [['stream-unterminated', 'warning']],
    );
    assert.match(
      analysis.findings[0].message,
      /^The client closed the connection after 1 event \(byte \d+\), before the response ended: .*the upstream did not cut it\.$/,
    );
    // `lint ID` analyses the parsed capture without the exchange: the response carries who cut it.
    const { response: parsed } = parseExchange(exchangeOf({ state: 'incomplete', error }), bytes(cutStream));
    assert.equal(analyze({ response: parsed }).findings[0].severity, 'warning');
  });

  test('a stream the upstream cut stays an error; one Tokenscope stopped capturing is a note', () => {
    const reset = analyzeExchange(
      exchangeOf({ state: 'incomplete', error: 'the upstream connection broke after 131 bytes (ECONNRESET)' }),
      bytes(cutStream),
    );
    assert.deepEqual(
      reset.analysis.findings.map((f) => [f.rule, f.severity]),
      [['stream-unterminated', 'error']],
    );
    const stopped = analyzeExchange(
      exchangeOf({ state: 'incomplete', error: 'interrupted: Tokenscope stopped while the response was streaming (131 bytes kept)' }),
      bytes(cutStream),
    );
    assert.deepEqual(
      stopped.analysis.findings.map((f) => [f.rule, f.severity]),
      [['stream-unterminated', 'info']],
    );
  });

  test('a request body that is not JSON is ignored, the response is still analysed', () => {
    const exchange = {
      id: 'x2',
      sessionId: 's',
      startedAt: 0,
      state: 'complete',
      route: 'default',
      upstreamUrl: 'u',
      method: 'POST',
      path: '/v1/chat/completions',
      requestHeaders: {},
      requestBody: '{"model": "moonshotai/kimi',
    } as CapturedExchange;
    const out = analyzeExchange(exchange, new TextEncoder().encode(''));
    assert.equal(out.request, undefined);
    assert.deepEqual(out.summary.rules, ['empty-response']);
  });
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, analyzeExchange, prepare, renderPlain, runChecks } from '../../src/core/analyze';
import type { Check } from '../../src/core/checks/types';
import { getFormat } from '../../src/core/formats/index';
import type { CapturedExchange } from '../../src/core/model';
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
    assert.ok(a.findings.some((f) => f.rule === 'finish-reason-mismatch' && f.severity === 'error'), 'length mid-call');
  });

  test('a structured response is rendered with the family: the call sits inside the Kimi section', () => {
    const a = analyze({ response: response({ message: { content: 'Reading.', toolCalls: [call('read', '{"filePath":"a"}', 'functions.read:0')] }, finishReason: 'tool_calls' }) });
    assert.equal(a.native.source, 'rendered');
    assert.ok(a.native.text.includes('<|tool_calls_section_begin|>'));
    assert.deepEqual(a.findings, []);
  });

  test('without a family the turn is laid out plainly and family-independent checks still run', () => {
    const r = response({ model: 'acme/other-model', message: { reasoning: 'Think.', content: 'Listing.', toolCalls: [call('ls', '{dirPath: "src"}')] }, finishReason: 'tool_calls' });
    const a = analyze({ response: r });
    assert.equal(a.family, undefined);
    assert.equal(a.native.text, 'Think.\n\nListing.\nls {dirPath: "src"}');
    const f = a.findings.find((x) => x.rule === 'args-invalid-json');
    assert.ok(f);
    assert.equal(a.native.text.slice(f.start, f.end), 'd', 'the JSON syntax error is underlined');
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
    const boom: Check = { id: 'boom', severity: 'error', title: 'Boom', why: 'Test.', run: () => { throw new Error('kaput'); } };
    const fine: Check = { id: 'fine', severity: 'info', title: 'Fine', why: 'Test.', run: () => [{ rule: 'fine', severity: 'info', message: 'ok', location: 'content' }] };
    const out = runChecks(prepare({ response: response() }).ctx, [boom, fine]);
    assert.deepEqual(out.map((f) => [f.rule, f.severity]), [['internal-error', 'warning'], ['fine', 'info']]);
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
    const r = response({ message: { content: FIREWORKS_LEAK, reasoning: 'Plan. <|tool_calls_section_begin|>' }, finishReason: 'stop', wireIssues: [{ code: 'no-terminal-event', message: 'no [DONE]' }], terminated: false });
    const a = analyze({ response: r });
    const positioned = a.findings.filter((f) => f.start !== undefined);
    for (let i = 1; i < positioned.length; i++) assert.ok(positioned[i - 1].start! <= positioned[i].start!);
    const tail = a.findings.slice(positioned.length);
    assert.ok(tail.every((f) => f.start === undefined));
    assert.deepEqual(tail.map((f) => f.rule), ['finish-reason-mismatch', 'stream-unterminated']);
  });
});

describe('analyzeExchange', () => {
  test('parses both bodies and summarizes counts, rules and the served provider', () => {
    const exchange: CapturedExchange = {
      id: 'x1', sessionId: 's1', startedAt: 0, state: 'complete', route: 'openrouter', upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST', path: '/api/v1/chat/completions', requestHeaders: {}, servedProvider: 'Fireworks',
      requestBody: JSON.stringify({ model: KIMI, messages: [{ role: 'user', content: 'post it' }], tools: [{ type: 'function', function: { name: 'channel_reply', parameters: { type: 'object' } } }] }),
      responseHeaders: { 'Content-Type': 'application/json' },
    };
    const body = JSON.stringify({ id: 'gen-1', object: 'chat.completion', model: KIMI, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: FIREWORKS_LEAK } }] });
    const { response: res, request: req, analysis, summary } = analyzeExchange(exchange, new TextEncoder().encode(body));
    assert.equal(res.protocol, 'openai-chat');
    assert.equal(req?.tools[0].name, 'channel_reply');
    assert.equal(summary.family, 'kimi-k2');
    assert.equal(summary.provider, 'Fireworks');
    assert.equal(summary.finishReason, 'stop');
    assert.equal(summary.counts.error, analysis.findings.filter((f) => f.severity === 'error').length);
    assert.ok(summary.counts.error >= 2);
    assert.deepEqual(summary.rules, analysis.findings.map((f) => f.rule));
    assert.ok(summary.rules.includes('markup-in-content'));
  });

  test('a request body that is not JSON is ignored, the response is still analysed', () => {
    const exchange = { id: 'x2', sessionId: 's', startedAt: 0, state: 'complete', route: 'default', upstreamUrl: 'u', method: 'POST', path: '/v1/chat/completions', requestHeaders: {}, requestBody: '{"model": "moonshotai/kimi' } as CapturedExchange;
    const out = analyzeExchange(exchange, new TextEncoder().encode(''));
    assert.equal(out.request, undefined);
    assert.deepEqual(out.summary.rules, ['empty-response']);
  });
});

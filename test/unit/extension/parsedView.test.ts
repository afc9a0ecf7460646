// The Parsed tab's data, built by the host from the core's parse: calls on both sides, differences marked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prepare, runChecks } from '../../../src/core/analyze';
import { turnReport } from '../../../src/core/parsed';
import { parsedView } from '../../../src/extension/exchangeView';
import { call, K, kimiSection, response } from '../checks/helpers';

const READ = '{"filePath":"a.ts"}';
const LS = '{"path":"src"}';

function view(input: Parameters<typeof prepare>[0]) {
  const { ctx, familySource, message } = prepare(input);
  const findings = runChecks(ctx);
  const analysis = { family: ctx.format?.id, familySource, native: ctx.native, message, findings };
  return parsedView(turnReport(analysis, ctx), input.response?.message);
}

describe('Parsed tab view', () => {
  it('raw model text: the parse, and no provider side', () => {
    const v = view({
      nativeText: `Looking.${K.SECTION_BEGIN}${K.CALL_BEGIN}functions.read:0${K.ARG_BEGIN}{"filePath":"a`,
      model: 'moonshotai/kimi-k2-0905',
    });
    assert.equal(v.source, 'raw');
    assert.equal(v.family, 'Kimi K2');
    assert.equal(v.content, 'Looking.');
    assert.equal(v.provider, undefined);
    assert.deepEqual(
      v.calls.map((c) => [c.name, c.complete, c.argumentsPretty]),
      [['read', false, undefined]],
    );
    assert.equal(typeof v.calls[0].start, 'number');
  });

  it('logprobs show a call the provider dropped, and changed arguments: both sides marked, the finding quoted', () => {
    const raw = `Both.${K.SECTION_BEGIN}${K.CALL_BEGIN}functions.read:0${K.ARG_BEGIN}${READ}${K.CALL_END}${K.CALL_BEGIN}functions.ls:1${K.ARG_BEGIN}${LS}${K.CALL_END}${K.SECTION_END}`;
    const res = response({
      finishReason: 'tool_calls',
      message: { content: 'Both.', toolCalls: [call('read', '{"filePath":"b.ts"}', 'functions.read:0')] },
      logprobTokens: [{ token: raw }],
    });
    const v = view({ response: res });
    assert.equal(v.source, 'logprobs');
    assert.deepEqual(
      v.calls.map((c) => c.mismatch),
      ['arguments changed by the provider', 'not in the provider’s tool_calls'],
    );
    assert.deepEqual(
      v.provider?.calls.map((c) => c.mismatch),
      ['arguments changed by the provider'],
    );
    assert.equal(v.provider?.content, 'Both.');
    assert.equal(v.mismatches.length, 2);
    assert.equal(v.calls[0].argumentsPretty, JSON.stringify({ filePath: 'a.ts' }, null, 2));
  });

  it('a healthy structured response: the provider’s calls on both sides, nothing marked', () => {
    const v = view({
      response: response({
        finishReason: 'tool_calls',
        message: { content: 'Reading.', toolCalls: [call('read', READ, 'functions.read:0')] },
      }),
    });
    assert.equal(v.source, 'reconstruction');
    assert.deepEqual(
      v.calls.map((c) => [c.name, c.arguments, c.mismatch]),
      [['read', READ, undefined]],
    );
    assert.deepEqual(
      v.provider?.calls.map((c) => [c.name, c.arguments]),
      [['read', READ]],
    );
    assert.deepEqual(v.mismatches, []);
  });

  it('markup leaked into content: the parse holds the leaked call, the provider side none', () => {
    const v = view({
      response: response({ finishReason: 'stop', message: { content: `Sure.${kimiSection('read', READ)}`, toolCalls: [] } }),
    });
    assert.equal(v.content, 'Sure.');
    assert.deepEqual(
      v.calls.map((c) => c.name),
      ['read'],
    );
    assert.deepEqual(v.provider?.calls, []);
    assert.equal(v.provider?.content, `Sure.${kimiSection('read', READ)}`);
  });
});

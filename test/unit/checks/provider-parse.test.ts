// provider-parse-mismatch: the provider's structured tool_calls against what a correct parser extracts from the
// text the model wrote, when the response carries that text (logprobs, markup left in content).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, prepare } from '../../../src/core/analyze';
import check from '../../../src/core/checks/provider-parse-mismatch';
import { callMismatches, sameJson, turnParse } from '../../../src/core/parsed';
import type { ToolCall } from '../../../src/core/model';
import { normalizeRequest, parseResponseBody } from '../../../src/core/wire/index';
import { RECORDINGS, recording } from '../../helpers/shared';
import { timeCpu } from '../../helpers/timing';
import { call, K, kimiSection, response, run, slice } from './helpers';

const kimiCall = (name: string, args: string, i: number) => `${K.CALL_BEGIN}functions.${name}:${i}${K.ARG_BEGIN}${args}${K.CALL_END}`;
/** The whole output as per-token logprobs would spell it (split at every marker, as a tokenizer would). */
const logprobs = (text: string) =>
  text
    .split(/(<\|[a-z_]+\|>)/)
    .filter(Boolean)
    .map((token) => ({ token }));
const structured = (content: string | undefined, calls: ToolCall[], raw?: string) =>
  response({
    finishReason: 'tool_calls',
    message: { content, toolCalls: calls },
    ...(raw === undefined ? {} : { logprobTokens: logprobs(raw) }),
  });

const READ = '{"filePath":"src/app.ts"}';
const LS = '{"path":"src"}';
const TWO_CALLS = `Looking.${K.SECTION_BEGIN}${kimiCall('read', READ, 0)}${kimiCall('ls', LS, 1)}${K.SECTION_END}`;

describe('provider-parse-mismatch', () => {
  test('dropped: the logprobs show two complete calls, the provider returned one', () => {
    const r = run(check, { response: structured('Looking.', [call('read', READ, 'functions.read:0')], TWO_CALLS) });
    assert.equal(r.findings.length, 1);
    const [f] = r.findings;
    assert.equal(f.severity, 'error');
    assert.match(
      f.message,
      /complete call to ls \(`\{"path":"src"\}`\), found in the output its logprobs spell, but the provider's tool_calls do not hold it/,
    );
  });

  test('arguments changed: compared as parsed JSON, so spacing and key order are no difference', () => {
    const same = run(check, {
      response: structured(
        'Looking.',
        [call('read', '{ "filePath" : "src/app.ts" }', 'functions.read:0'), call('ls', LS, 'functions.ls:1', 1)],
        TWO_CALLS,
      ),
    });
    assert.deepEqual(same.findings, []);
    const changed = run(check, {
      response: structured(
        'Looking.',
        [call('read', '{"filePath":"src/main.ts"}', 'functions.read:0'), call('ls', LS, 'functions.ls:1', 1)],
        TWO_CALLS,
      ),
    });
    assert.equal(changed.findings.length, 1);
    assert.equal(changed.findings[0].location, 'tool_calls[0].arguments');
    assert.match(
      changed.findings[0].message,
      /arrived with arguments `\{"filePath":"src\/main\.ts"\}`, but the model wrote `\{"filePath":"src\/app\.ts"\}`/,
    );
    assert.equal(slice(changed, changed.findings[0]), '{"filePath":"src/main.ts"}', 'points at the delivered arguments');
  });

  test('not in the text: the provider returned a call the model did not write', () => {
    const raw = `Looking.${kimiSection('read', READ)}`;
    const r = run(check, {
      response: structured('Looking.', [call('read', READ, 'functions.read:0'), call('write', '{"x":1}', 'functions.write:1', 1)], raw),
    });
    assert.deepEqual(
      r.findings.map((f) => f.location),
      ['tool_calls[1]'],
    );
    assert.match(
      r.findings[0].message,
      /Call 1 \(write\) is in the provider's tool_calls, but the output its logprobs spell holds no such call/,
    );
  });

  test('the provider dropped every call although the model wrote one, with nothing left in content', () => {
    const r = run(check, {
      response: response({ finishReason: 'stop', message: { toolCalls: [] }, logprobTokens: logprobs(kimiSection('read', READ)) }),
    });
    assert.equal(r.findings.length, 1);
    assert.match(r.findings[0].message, /complete call to read/);
  });

  test('a call the output cut off is not expected to be delivered: no mismatch (call-unclosed and the engines say the rest)', () => {
    const cut = `${K.SECTION_BEGIN}${kimiCall('read', READ, 0)}${K.CALL_BEGIN}functions.ls:1${K.ARG_BEGIN}{"pa`;
    assert.deepEqual(run(check, { response: structured(undefined, [call('read', READ, 'functions.read:0')], cut) }).findings, []);
    // Delivered with what arrived: the truncation, not a change.
    assert.deepEqual(
      run(check, {
        response: structured(undefined, [call('read', READ, 'functions.read:0'), call('ls', '{"pa', 'functions.ls:1', 1)], cut),
      }).findings,
      [],
    );
  });

  test('logprobs that cannot be the whole output are not judged: no markers (special tokens skipped), or not holding the content', () => {
    const noMarkers = `Looking.functions.read:0${READ}functions.ls:1${LS}`;
    assert.deepEqual(run(check, { response: structured('Looking.', [call('read', READ)], noMarkers) }).findings, []);
    const partial = kimiSection('read', READ) + kimiSection('ls', LS);
    assert.deepEqual(
      run(check, { response: structured('A long answer the logprobs do not cover.', [call('read', READ)], partial) }).findings,
      [],
    );
  });

  test('logprob bytes are decoded across token boundaries (a character split over two tokens)', () => {
    const raw = `Ça.${kimiSection('read', '{"filePath":"é.ts"}')}`;
    const bytes = [...new TextEncoder().encode(raw)];
    const tokens = [
      { token: 'bytes:', bytes: bytes.slice(0, 1) },
      { token: 'x', bytes: bytes.slice(1) },
    ];
    const calls = [call('read', '{"filePath":"é.ts"}', 'functions.read:0')];
    const { ctx } = prepare({
      response: response({ finishReason: 'tool_calls', message: { content: 'Ça.', toolCalls: calls }, logprobTokens: tokens }),
    });
    assert.equal(turnParse(ctx).source, 'logprobs');
    assert.deepEqual(check.run(ctx), []);
  });

  test('markup in content beside structured calls: a complete call left in content was dropped; a duplicate of a delivered one was not', () => {
    const content = `Both.${kimiSection('ls', LS, 'functions.ls:1')}`;
    const r = run(check, { response: structured(content, [call('read', READ, 'functions.read:0')]) });
    assert.equal(r.findings.length, 1);
    assert.match(r.findings[0].message, /complete call to ls .*found in the markup left in content/);
    assert.equal(slice(r, r.findings[0]), kimiCall('ls', LS, 1));
    const dup = `Again.${kimiSection('read', READ)}`;
    assert.deepEqual(run(check, { response: structured(dup, [call('read', READ, 'functions.read:0')]) }).findings, []);
  });

  test('markup in content and no structured call at all is markup-in-content alone (no double report)', () => {
    const a = analyze({
      response: response({ finishReason: 'stop', message: { content: `Sure.${kimiSection('read', READ)}`, toolCalls: [] } }),
    });
    assert.ok(a.findings.some((f) => f.rule === 'markup-in-content'));
    assert.ok(!a.findings.some((f) => f.rule === check.id));
  });

  test('raw model text has no provider parse to compare with', () => {
    assert.deepEqual(run(check, { nativeText: TWO_CALLS, model: 'moonshotai/kimi-k2-0905' }).findings, []);
  });

  test('a healthy structured response without logprobs is never judged', () => {
    const { ctx } = prepare({ response: structured('Looking.', [call('read', READ, 'functions.read:0')]) });
    assert.equal(turnParse(ctx).source, 'reconstruction');
    assert.deepEqual(callMismatches(turnParse(ctx)), []);
  });

  for (const name of RECORDINGS) {
    test(`silent on the healthy recording ${name}`, (t) => {
      const r = recording(name);
      if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
      const request = r.files['request.json'] ? normalizeRequest(JSON.parse(r.files['request.json'])) : undefined;
      const { ctx } = prepare({ response: parseResponseBody(r.files['response.json'] ?? r.files['stream.sse']), request });
      assert.deepEqual(check.run(ctx), []);
      // The parse holds exactly the provider's calls.
      const p = turnParse(ctx);
      assert.deepEqual(
        p.calls.map((c) => [c.name, c.arguments]),
        (p.providerCalls ?? []).map((c) => [c.name, c.arguments]),
      );
    });
  }
});

describe('sameJson', () => {
  test('deep equality, with schema-typed scalars equal to their text', () => {
    assert.ok(sameJson({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] }));
    assert.ok(sameJson({ n: 5, ok: true }, { n: '5', ok: 'true' }));
    assert.ok(!sameJson({ a: 1 }, { a: 2 }));
    assert.ok(!sameJson({ a: 1 }, { a: 1, b: 2 }));
    assert.ok(!sameJson([1, 2], [2, 1]));
    assert.ok(!sameJson({ a: null }, { a: 'null' }));
  });
});

test('matching stays linear in the number of calls: 20,000 changed calls are compared in well under a few seconds', () => {
  // Every call changed: a pairwise search would compare 20,000 × 20,000 call pairs (minutes); by key it is one pass.
  const n = 20_000;
  const parsed = Array.from({ length: n }, (_, i) => ({
    index: i,
    id: null,
    name: 'read',
    arguments: `{"path":"f${i}"}`,
    argumentsJson: { path: `f${i}` },
    complete: true,
    start: null,
    end: null,
  }));
  const provider = parsed.map((c, i) => ({
    index: i,
    id: null,
    name: 'read',
    arguments: `{"path":"g${i}"}`,
    argumentsJson: { path: `g${i}` },
  }));
  // CPU time of this thread, not wall time: on a loaded machine the wall clock also counts other processes' turns,
  // while a pairwise search costs minutes of CPU wherever it runs.
  const { value: out, cpuMs: ms } = timeCpu(() =>
    callMismatches({ source: 'logprobs', content: null, reasoning: null, calls: parsed, providerCalls: provider }),
  );
  assert.equal(out.length, n);
  assert.ok(out.every((m, i) => m.kind === 'arguments-changed' && m.parsedIndex === i && m.providerIndex === i));
  assert.ok(ms < 3000, `${ms.toFixed(0)} ms of CPU`);
  // Reordered but equal calls (keys in another order, a number sent as a string) all match: nothing to report.
  const same = parsed.map((c, i) => ({
    index: i,
    id: null,
    name: 'read',
    arguments: `{"path": "f${n - 1 - i}"}`,
    argumentsJson: { path: `f${n - 1 - i}` },
  }));
  assert.deepEqual(callMismatches({ source: 'logprobs', content: null, reasoning: null, calls: parsed, providerCalls: same }), []);
  const typed = [
    {
      index: 0,
      id: null,
      name: 'edit',
      arguments: '{"line":"7","opts":{"b":1,"a":2}}',
      argumentsJson: { line: '7', opts: { b: 1, a: 2 } },
      complete: true,
      start: null,
      end: null,
    },
  ];
  assert.deepEqual(
    callMismatches({
      source: 'logprobs',
      content: null,
      reasoning: null,
      calls: typed,
      providerCalls: [
        {
          index: 0,
          id: null,
          name: 'edit',
          arguments: '{"opts":{"a":2,"b":1},"line":7}',
          argumentsJson: { opts: { a: 2, b: 1 }, line: 7 },
        },
      ],
    }),
    [],
  );
});

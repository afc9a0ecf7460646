import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyze } from '../../../src/core/analyze';
import { ruleInfo } from '../../../src/core/checks/index';
import type { ParsedResponse } from '../../../src/core/model';
import { agentRecipe } from '../../../src/core/agents/recipes';
import { exchangeTokenStream } from '../../../src/core/tokens/exchange';
import { loadFromDir } from '../../../src/core/tokens/resolve';
import { recipeClipboard, recipeMarkdown } from '../../../src/extension/agentText';
import { findingRange, positionAt, tokenStreamView, wireEvents } from '../../../src/extension/exchangeView';
import { SEGMENT_KINDS, TOKEN_KINDS } from '../../../webview/protocol';
import { kimiTokenizerFolder } from '../../helpers/shared';

describe('exchange view for the webview', () => {
  it('maps offsets to line and character', () => {
    const text = 'ab\ncd\n\nef';
    assert.deepEqual(positionAt(text, 0), { line: 0, character: 0 });
    assert.deepEqual(positionAt(text, 4), { line: 1, character: 1 });
    assert.deepEqual(positionAt(text, 7), { line: 3, character: 0 });
    assert.deepEqual(positionAt(text, 99), { line: 3, character: 2 });
  });

  it('gives a missing marker a one-character range at its expected place', () => {
    const base = { rule: 'r', severity: 'error' as const, message: 'm', location: 'content' };
    assert.deepEqual(findingRange({ ...base, start: 3, end: 9 }, 20), { start: 3, end: 9 });
    assert.deepEqual(findingRange({ ...base, expectedAt: 20 }, 20), { start: 19, end: 20 });
    assert.deepEqual(findingRange(base, 20), { start: 0, end: 1 });
  });

  it('computes the gaps between wire events', () => {
    const res = {
      events: [
        { data: 'a', t: 100 },
        { data: 'b', t: 130 },
        { data: ': c', comment: true },
        { data: 'd', t: 180 },
      ],
    } as ParsedResponse;
    assert.deepEqual(
      wireEvents(res).map((e) => e.gap),
      [undefined, 30, undefined, 50],
    );
  });

  it('turns a real Kimi K2 token stream into columns with the unterminated section placed on tokens', () => {
    const tokenizer = loadFromDir(kimiTokenizerFolder(), 'kimi-k2');
    const nativeText =
      'I\'ll read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "README.md"}<|tool_call_end|>';
    const analysis = analyze({ nativeText, model: 'moonshotai/kimi-k2-0905' });
    const { stream } = exchangeTokenStream({ tokenizer, nativeText, model: 'moonshotai/kimi-k2-0905', analysis });
    const view = tokenStreamView(stream, ruleInfo);
    assert.equal(view.ids.length, stream.tokens.length);
    for (const col of [view.texts, view.starts, view.ends, view.kinds, view.segments]) assert.equal(col.length, view.ids.length);
    // Raw output: the markers are single special ids, and the text of ordinary tokens is the text itself.
    const begin = view.texts.indexOf('<|tool_calls_section_begin|>');
    assert.equal(TOKEN_KINDS[view.kinds[begin]], 'special');
    assert.equal(view.texts.slice(0, 3).join(''), nativeText.slice(0, view.ends[2]));
    assert.ok(view.segments.every((s) => s >= 0 && s < SEGMENT_KINDS.length));
    // Raw output: what is shown is what is counted.
    assert.equal(view.accounting.find((a) => a.label === 'Counted')!.value, `${view.ids.length} completion tokens (0 in reasoning)`);
    assert.equal(view.count, view.ids.length);

    // The same markup leaked into a structured response's content: the view draws the markers as the text the provider
    // returned, and the count (of the tokens the model emitted) says why it is smaller.
    const response = {
      protocol: 'openai-chat',
      streamed: false,
      model: 'moonshotai/kimi-k2-0905',
      message: { content: nativeText, toolCalls: [] },
      finishReason: 'stop',
      terminated: true,
      events: [],
      wireIssues: [],
    } as ParsedResponse;
    const leaked = tokenStreamView(exchangeTokenStream({ tokenizer, response }).stream, ruleInfo);
    const counted = leaked.accounting.find((a) => a.label === 'Counted')!.value;
    // Counted: the raw output's tokens and the end-of-turn token a structured response implies.
    assert.equal(
      counted,
      `${view.ids.length + 1} completion tokens (0 in reasoning); ${leaked.ids.length} pieces drawn: a marker spelled out as text is drawn as its text pieces and counted once, as the special token the model emitted`,
    );
    // One count: the tab and the toolbar give the Counted number, not the pieces drawn.
    assert.equal(leaked.count, view.ids.length + 1);
    assert.match(leaked.countMeaning!, /^completion tokens as the model emitted them/);
    assert.ok(leaked.ids.length > view.ids.length + 1);
    const unclosed = view.findings.find((f) => f.rule === 'section-unclosed');
    assert.ok(unclosed, `findings: ${view.findings.map((f) => f.rule).join(', ')}`);
    assert.equal(unclosed.expectedMarker, '<|tool_calls_section_end|>');
    assert.equal(unclosed.expectedBefore, view.ids.length, 'the missing end belongs after the last token');
    assert.ok(unclosed.title && unclosed.why, 'rule help is attached');
  });
});

describe('token view accounting: the prompt line', () => {
  it('shows the prompt rendered with the model template against the bill, MISMATCH when far off, or why there is none', () => {
    const tokenizer = loadFromDir(kimiTokenizerFolder(), 'kimi-k2');
    const response: ParsedResponse = {
      protocol: 'openai-chat',
      streamed: false,
      model: 'moonshotai/kimi-k2-0905',
      message: { content: 'Hi', toolCalls: [] },
      finishReason: 'stop',
      terminated: true,
      events: [],
      wireIssues: [],
      usage: { promptTokens: 60, completionTokens: 2 },
    };
    const row = (v: ReturnType<typeof tokenStreamView>) => v.accounting.find((a) => a.label === 'Prompt')?.value;
    const far = tokenStreamView(exchangeTokenStream({ tokenizer, response, promptTokens: 40 }).stream, ruleInfo);
    assert.equal(row(far), "40 tokens in the model's chat template, 60 billed (+20). MISMATCH: see the prompt-token-mismatch finding");
    assert.ok(far.findings.some((f) => f.rule === 'prompt-token-mismatch' && f.title === 'Prompt token mismatch'));
    const near = tokenStreamView(exchangeTokenStream({ tokenizer, response, promptTokens: 59 }).stream, ruleInfo);
    assert.equal(row(near), "59 tokens in the model's chat template, 60 billed (+1)");
    const none = tokenStreamView(exchangeTokenStream({ tokenizer, response, promptNote: 'no chat template in /x' }).stream, ruleInfo);
    assert.equal(row(none), 'not rendered: no chat template in /x');
  });
});

describe('agent recipes in the editor', () => {
  it('shows editor agents their steps and fields, and copies the snippet or the shell line', () => {
    const cont = agentRecipe('continue', { proxyUrl: 'http://127.0.0.1:8719' });
    assert.match(recipeMarkdown(cont), /apiBase: http:\/\/127\.0\.0\.1:8719\/openrouter\/v1/);
    assert.equal(recipeClipboard(cont), cont.launch.kind === 'settings' ? cont.launch.snippet?.text : undefined);
    const aider = agentRecipe('aider', { proxyUrl: 'http://127.0.0.1:8719' });
    assert.match(recipeClipboard(aider), /^OPENAI_API_BASE=http:\/\/127\.0\.0\.1:8719\/openrouter\/v1 .*aider/);
    const cline = agentRecipe('cline', { proxyUrl: 'http://127.0.0.1:8719' });
    assert.match(recipeMarkdown(cline), /\| Base URL \| `http:\/\/127\.0\.0\.1:8719\/openrouter\/v1` \|/);
  });
});

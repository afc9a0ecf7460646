import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyze } from '../../../src/core/analyze';
import check, { PROMPT_TOLERANCE, promptTokenFinding } from '../../../src/core/checks/prompt-token-mismatch';
import { response, run } from './helpers';

const answer = (usage: { promptTokens?: number; cachedTokens?: number }) =>
  response({ message: { content: 'Hi.' }, finishReason: 'stop', usage });

describe('prompt-token-mismatch', () => {
  test('a provider that bills a longer prompt than the model template renders is flagged, and told why it may differ', () => {
    const { findings } = run(check, { response: answer({ promptTokens: 60 }), promptTokens: 40 });
    assert.equal(findings.length, 1);
    const f = findings[0];
    assert.equal(f.rule, 'prompt-token-mismatch');
    assert.equal(f.severity, 'warning');
    assert.match(f.message, /billed 60 prompt tokens, but the model's own chat template renders this request to 40 \(\+50%\)/);
    assert.match(f.message, /longer prompt/);
    assert.match(f.message, /added text of its own/);
  });

  test('a shorter bill explained by cached tokens says it is cache accounting', () => {
    const f = promptTokenFinding(1000, { promptTokens: 200, cachedTokens: 800 });
    assert.ok(f);
    assert.match(f.message, /With the 800 cached tokens added it matches/);
    const g = promptTokenFinding(1000, { promptTokens: 200 });
    assert.match(g!.message, /shorter prompt/);
  });

  test('within tolerance, no billed usage, or no local count: nothing', () => {
    assert.deepEqual(run(check, { response: answer({ promptTokens: 40 + PROMPT_TOLERANCE.tokens }), promptTokens: 40 }).findings, []);
    // 1% of 10,000 is 100: 90 tokens off is within the ratio.
    assert.equal(promptTokenFinding(10_000, { promptTokens: 10_090 }), undefined);
    assert.ok(promptTokenFinding(10_000, { promptTokens: 10_200 }));
    assert.deepEqual(run(check, { response: answer({}), promptTokens: 40 }).findings, []);
    assert.deepEqual(run(check, { response: answer({ promptTokens: 400 }) }).findings, []);
  });

  test('analyze() reports it when given the local count', () => {
    const a = analyze({ response: answer({ promptTokens: 90 }), promptTokens: 40 });
    assert.ok(a.findings.some((f) => f.rule === 'prompt-token-mismatch'));
    assert.ok(!analyze({ response: answer({ promptTokens: 90 }) }).findings.some((f) => f.rule === 'prompt-token-mismatch'));
  });
});

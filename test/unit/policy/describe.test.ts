/** Provider policy in words (status bar, tree row, exchange view, show), slug lookup, and comparison verdicts. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CapturedExchange } from '../../../src/core/model';
import { latestModel, policyLines, policyStatus, policySummary, policyText, policyWordFor } from '../../../src/core/policy/describe';
import { derivedSlug, entriesFromEndpoints, ProviderDirectory } from '../../../src/core/policy/slugs';
import { providerVerdict } from '../../../src/core/upstream/compare-verdicts';
import type { ProviderResult, SampleResult } from '../../../src/core/upstream/compare';
import { exchangeView } from '../../../src/extension/exchangeView';
import { exchangeRow } from '../../../src/extension/viewModel';
import { openRouterExchange } from '../../helpers/exchanges';

const K2 = 'moonshotai/kimi-k2-0905';
const DIR = new ProviderDirectory(
  entriesFromEndpoints([
    { slug: 'chutes', name: 'Chutes' },
    { slug: 'moonshotai', name: 'Moonshot AI' },
    { slug: 'deepinfra/fp4', name: 'DeepInfra' },
    { slug: 'atlas-cloud', name: 'AtlasCloud' },
  ]),
);

test("slugs: a served display name maps to the listing's slug; an unknown one to a flagged guess", () => {
  assert.deepEqual(DIR.slugOf('Moonshot AI'), { slug: 'moonshotai', known: true });
  assert.deepEqual(DIR.slugOf('DeepInfra'), { slug: 'deepinfra', known: true });
  assert.deepEqual(DIR.slugOf('Atlas Cloud'), { slug: 'atlas-cloud', known: true }, 'spacing and case do not matter');
  assert.deepEqual(DIR.slugOf('atlas-cloud'), { slug: 'atlas-cloud', known: true }, 'a slug given as is');
  assert.deepEqual(DIR.slugOf('Google AI Studio'), { slug: 'google-ai-studio', known: false });
  assert.equal(DIR.nameOf('deepinfra/fp4'), 'DeepInfra');
  assert.equal(derivedSlug(' Moonshot AI '), 'moonshot-ai');
});

test("status bar: the latest exchange's model policy by display name, else a count, else nothing", () => {
  const policies = { [K2]: { ignore: ['chutes', 'moonshotai'] }, 'qwen/*': { order: ['deepinfra'], allow_fallbacks: false } };
  assert.equal(policyStatus(policies, K2, DIR), 'kimi-k2-0905: avoid Chutes, Moonshot AI');
  assert.equal(policyStatus(policies, 'qwen/qwen3-coder', DIR), 'qwen3-coder: prefer DeepInfra · no fallbacks');
  assert.equal(policyStatus(policies, 'z-ai/glm-4.6', DIR), '2 provider policies');
  assert.equal(policyStatus({ [K2]: { only: ['novita'], allow_fallbacks: false } }, undefined), '1 provider policy');
  assert.equal(policyStatus({}, K2, DIR), undefined);
  assert.equal(policyText({ only: ['novita'], allow_fallbacks: false }), 'only novita', 'a slug no listing named stays a slug');
  assert.deepEqual(policyLines(policies, DIR), [
    'moonshotai/kimi-k2-0905: avoid Chutes, Moonshot AI (OpenRouter routes)',
    'qwen/*: prefer DeepInfra · no fallbacks (OpenRouter routes)',
  ]);
  // A slug no listing names (a lower-cased display name, say) is flagged once some listing was read.
  assert.deepEqual(policyLines({ [K2]: { ignore: ['moonshot-ai', 'chutes'] } }, DIR), [
    "moonshotai/kimi-k2-0905: avoid moonshot-ai, Chutes (OpenRouter routes; not a slug in OpenRouter's listings Tokenscope has read: moonshot-ai)",
  ]);
  assert.deepEqual(
    policyLines({ [K2]: { ignore: ['moonshot-ai'] } }, new ProviderDirectory()),
    ['moonshotai/kimi-k2-0905: avoid moonshot-ai (OpenRouter routes)'],
    'no listing read: nothing to judge by',
  );
  const x = (startedAt: number, model?: string) => ({ startedAt, requestModel: model }) as CapturedExchange;
  assert.equal(latestModel([x(3), x(2, 'b'), x(1, 'a')]), 'b');
  assert.equal(latestModel([]), undefined);
});

function exchange(served: string | undefined, sent: Record<string, unknown>): CapturedExchange {
  return openRouterExchange({
    ...(served && { servedProvider: served }),
    policy: { model: K2, policy: { ignore: ['moonshotai'] }, agent: { sort: 'price' }, sent },
  });
}

test('each exchange: which policy applied and whether the served provider honoured it (tree row, tooltip, view header, show)', () => {
  const ok = exchange('DeepInfra', { sort: 'price', ignore: ['moonshotai'] });
  assert.equal(
    policySummary(ok.policy!, 'DeepInfra', DIR),
    'moonshotai/kimi-k2-0905: provider {"sort":"price","ignore":["moonshotai"]} (merged with the agent\'s {"sort":"price"}); served by DeepInfra (deepinfra), honoured',
  );
  const bad = exchange('Moonshot AI', { ignore: ['moonshotai'] });
  assert.match(policySummary(bad.policy!, 'Moonshot AI', DIR), /; served by Moonshot AI \(moonshotai\), NOT honoured$/);
  assert.match(
    policySummary(bad.policy!, 'Moonshot AI'),
    /NOT honoured \(matched by name: OpenRouter's listings Tokenscope has read do not name this provider's slug\)$/,
  );
  assert.equal(policyWordFor(bad, DIR), 'policy NOT honoured');
  assert.equal(policyWordFor(exchange(undefined, {}), DIR), 'policy applied', 'no provider named (an error before any chunk)');
  assert.equal(policyWordFor({ ...ok, policy: undefined }), undefined);

  const row = exchangeRow(bad, undefined, DIR);
  // The row leads with the served provider; the policy word sits with the model in the description.
  assert.match(row.label, /^Moonshot AI · /);
  assert.match(row.description, /policy NOT honoured/);
  assert.match(row.tooltip, /^provider policy: moonshotai\/kimi-k2-0905: provider .*NOT honoured$/m);
  const view = exchangeView({ exchange: ok, chunks: [], slugs: DIR });
  assert.equal(view.title, 'exchange · DeepInfra · policy honoured');
  assert.match(view.meta.find((m) => m.label === 'Policy')!.value, /served by DeepInfra \(deepinfra\), honoured$/);
});

test('a comparison verdict per provider: broken with its error rules, clean, or failed; cancelled samples do not count', () => {
  const sample = (ok: boolean, rules: [string, 'error' | 'warning'][], cancelled = false) =>
    ({ outcome: { ok, cancelled }, findings: rules.map(([rule, severity]) => ({ rule, severity })) }) as unknown as SampleResult;
  const row = (samples: SampleResult[]) => ({ slug: 'chutes', name: 'Chutes', servedBy: ['Chutes'], samples }) as unknown as ProviderResult;
  const broken = providerVerdict(
    K2,
    row([
      sample(true, [
        ['section-unclosed', 'error'],
        ['markup-in-content', 'error'],
      ]),
      sample(true, [['kimi-call-id', 'warning']]),
      sample(false, [], true),
    ]),
    5,
    'p1',
  );
  assert.deepEqual(broken, {
    model: K2,
    provider: 'chutes',
    name: 'Chutes',
    at: 5,
    verdict: 'broken',
    rules: ['section-unclosed', 'markup-in-content'],
    samples: 2,
    broken: 1,
    failed: 0,
    servedBy: ['Chutes'],
    parentId: 'p1',
  });
  assert.equal(
    providerVerdict(K2, row([sample(true, [['kimi-call-id', 'warning']]), sample(false, [])]), 5)?.verdict,
    'clean',
    'a warning does not break; one answer is enough',
  );
  assert.deepEqual(
    [
      providerVerdict(K2, row([sample(false, []), sample(false, [])]), 5)?.verdict,
      providerVerdict(K2, row([sample(false, []), sample(false, [])]), 5)?.failed,
    ],
    ['failed', 2],
  );
  assert.equal(providerVerdict(K2, row([sample(false, [], true)]), 5), undefined, 'nothing judged: nothing stored');
});

test('scorecard: a stored comparison meets its row by slug or name; a compared provider the agent never met gets its own row', async () => {
  const { scorecard } = await import('../../../src/core/providers/scorecard');
  const served = (provider: string, startedAt: number) =>
    ({
      id: `x${startedAt}`,
      sessionId: 's',
      startedAt,
      state: 'complete',
      route: 'openrouter',
      upstreamUrl: '',
      method: 'POST',
      path: '/v1/chat/completions',
      requestHeaders: {},
      status: 200,
      requestModel: K2,
      servedProvider: provider,
    }) as CapturedExchange;
  const reader = { list: () => [served('Moonshot AI', 1)], get: () => undefined, readResponse: () => undefined };
  const verdict = (provider: string, name: string, at: number, v: 'clean' | 'broken') => ({
    model: K2,
    provider,
    name,
    at,
    verdict: v,
    rules: v === 'broken' ? ['section-unclosed'] : [],
    samples: 3,
    broken: v === 'broken' ? 3 : 0,
    failed: 0,
    servedBy: [name],
  });
  const rows = scorecard(reader, {
    slugs: [{ name: 'Moonshot AI', slug: 'moonshotai', source: 'endpoints', at: 0 }],
    comparisons: [
      verdict('moonshotai', 'MoonshotAI', 5, 'broken'),
      verdict('fireworks', 'Fireworks', 6, 'clean'),
      { ...verdict('x', 'X', 7, 'clean'), model: 'other/model' },
    ],
  });
  assert.deepEqual(
    rows.map((r) => [r.model, r.provider, r.exchanges, r.lastComparison?.verdict, r.lastComparison?.slug]),
    [
      [K2, 'Moonshot AI', 1, 'broken', 'moonshotai'],
      [K2, 'Fireworks', 0, 'clean', 'fireworks'],
      ['other/model', 'X', 0, 'clean', 'x'],
    ],
  );
  assert.equal(
    scorecard(reader, { model: K2, comparisons: [{ ...verdict('x', 'X', 7, 'clean'), model: 'other/model' }] }).length,
    1,
    '--model keeps other models out',
  );
  assert.equal(
    scorecard(reader, { since: 6, comparisons: [verdict('fireworks', 'Fireworks', 5, 'clean')] }).length,
    0,
    '--since drops older comparisons (and exchanges)',
  );
});

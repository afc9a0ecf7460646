import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RepairRecord } from '../../../src/core/model';
import type { ScorecardRow } from '../../../src/core/providers/scorecard';
import { exchangeView } from '../../../src/extension/exchangeView';
import { policyWord, providerDescription, providerLabel, slugLine } from '../../../src/extension/providersText';
import { readPolicies, readRepairSettings } from '../../../src/extension/repairSettings';
import { exchangeRow } from '../../../src/extension/viewModel';
import { openRouterExchange } from '../../helpers/exchanges';

const get =
  (o: Record<string, unknown>) =>
  <T>(k: string) =>
    o[k] as T | undefined;

test('repair settings: off by default, withhold unless passthrough, blank routes and models dropped', () => {
  assert.deepEqual(readRepairSettings(get({})), { enabled: false, truncated: 'withhold', routes: [], models: [] });
  assert.deepEqual(
    readRepairSettings(
      get({
        'repair.enabled': true,
        'repair.truncated': 'passthrough',
        'repair.routes': ['openrouter', ' '],
        'repair.models': ['moonshotai/*', 3],
      }),
    ),
    {
      enabled: true,
      truncated: 'passthrough',
      routes: ['openrouter'],
      models: ['moonshotai/*'],
    },
  );
  assert.equal(readRepairSettings(get({ 'repair.truncated': 'maybe' })).truncated, 'withhold');
});

test('a malformed providerPolicy setting applies nothing and says why in one line', () => {
  assert.deepEqual(readPolicies(get({ providerPolicy: { m: { ignore: ['chutes'] } } })), { policies: { m: { ignore: ['chutes'] } } });
  const bad = readPolicies(get({ providerPolicy: { m: { ignore: 'chutes' } } }));
  assert.deepEqual(bad.policies, {});
  assert.equal(bad.problem, 'tokenscope.providerPolicy: m.ignore must be a list of provider names');
});

const ROW: ScorecardRow = {
  model: 'moonshotai/kimi-k2-0905',
  provider: 'Chutes',
  slug: 'chutes',
  slugKnown: true,
  exchanges: 4,
  toolTurns: 3,
  brokenTurns: 3,
  brokenShare: 1,
  repairedTurns: 2,
  topRules: [{ rule: 'section-unclosed', turns: 3 }],
  ttftMsP50: 151,
  lastSeen: 0,
  lastComparison: { at: 0, verdict: 'broken', rules: ['section-unclosed'], slug: 'chutes', samples: 3, broken: 3, failed: 0 },
};

test('Providers view rows: the scorecard in one line, and what the policy does to the provider', () => {
  assert.equal(
    providerDescription(ROW),
    '3 tool turns · 100% broken · section-unclosed ×3 · TTFT 151 ms · last comparison broken (section-unclosed)',
  );
  assert.match(providerDescription(ROW, 'avoided'), / · policy: avoided$/);
  const m = 'moonshotai/kimi-k2-0905';
  assert.equal(policyWord({ [m]: { ignore: ['chutes'] } }, m, 'Chutes'), 'avoided');
  assert.equal(policyWord({ 'moonshotai/*': { order: ['fireworks'] } }, m, 'Fireworks'), 'preferred');
  assert.equal(policyWord({ [m]: { only: ['novita'] } }, m, 'Chutes'), 'excluded by only');
  assert.equal(policyWord({ [m]: { only: ['novita'] } }, m, 'Novita'), 'only');
  assert.equal(policyWord({}, m, 'Chutes'), undefined);
});

test('a repaired exchange: "repaired" in its tree row, the badge text and meta rows in its view', () => {
  const repair: RepairRecord = {
    truncated: 'withhold',
    calls: [
      { index: 0, id: 'functions.read:0', name: 'read', from: 'content', family: 'kimi-k2', status: 'delivered', argumentsChars: 16 },
    ],
    removedChars: { content: 124, reasoning: 0 },
    finishReason: { upstream: 'stop', delivered: 'tool_calls' },
  };
  const x = openRouterExchange({
    servedProvider: 'Fireworks',
    repair,
    policy: { model: 'moonshotai/kimi-k2-0905', policy: { ignore: ['chutes'] }, sent: { ignore: ['chutes'] } },
  });
  assert.match(exchangeRow(x).label, /^Fireworks · /);
  assert.match(exchangeRow(x).description, /repaired · policy honoured/);
  const v = exchangeView({ exchange: x, chunks: [] });
  assert.equal(v.repaired, '1 call delivered as tool_calls, 124 chars of markup removed from content, finish_reason stop → tool_calls');
  assert.ok(v.meta.some((m) => m.label === 'Repaired' && m.value.startsWith(v.repaired!)));
  assert.ok(v.meta.some((m) => m.label === 'Policy' && /served by Fireworks, honoured/.test(m.value)));
  assert.equal(exchangeView({ exchange: { ...x, repair: undefined }, chunks: [] }).repaired, undefined);
});

test('the Providers view row of exchanges no provider is named for shows no slug (none a policy could take)', () => {
  const row = { provider: '(not named)', slug: '', slugKnown: false };
  assert.equal(providerLabel(row), '(not named)');
  assert.doesNotMatch(slugLine(row), /`/, 'no slug quoted');
  assert.equal(providerLabel({ provider: 'NovitaAI', slug: 'novita', slugKnown: false }), 'NovitaAI (novita?)');
});

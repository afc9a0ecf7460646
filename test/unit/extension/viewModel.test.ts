import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CapturedExchange } from '../../../src/core/model';
import {
  emptyTreeMessage,
  exchangeRow,
  groupSessions,
  isBroken,
  liveText,
  statusBarText,
  statusIcon,
  storeSignature,
} from '../../../src/extension/viewModel';

let n = 0;
function x(o: Partial<CapturedExchange> = {}): CapturedExchange {
  n++;
  return {
    id: `x${n}`,
    sessionId: 's1',
    startedAt: 1_700_000_000_000 + n * 1000,
    state: 'complete',
    route: 'openrouter',
    upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
    method: 'POST',
    path: '/v1/chat/completions',
    requestHeaders: {},
    status: 200,
    agent: 'opencode',
    requestModel: 'moonshotai/kimi-k2-0905',
    ...o,
  };
}
const summary = (error: number, warning = 0) => ({
  model: 'moonshotai/kimi-k2-0905',
  provider: 'Chutes',
  finishReason: 'stop',
  counts: { error, warning, info: 0 },
  rules: error ? ['section-unclosed'] : [],
});

describe('captures view model', () => {
  it('calls an exchange broken on error findings, failed or cut-off exchanges and HTTP errors', () => {
    assert.equal(isBroken(x({ summary: summary(0, 2) })), false);
    assert.equal(isBroken(x({ summary: summary(1) })), true);
    assert.equal(isBroken(x({ state: 'incomplete' })), true);
    assert.equal(isBroken(x({ status: 502 })), true);
  });

  it('leads a row with what tells it apart (provider, finish, findings, time) and puts the shared model after', () => {
    const row = exchangeRow(x({ summary: summary(2, 1) }));
    assert.match(row.label, /^Chutes · stop · 3 findings · \d\d:\d\d:\d\d$/);
    assert.equal(row.description, 'moonshotai/kimi-k2-0905');
    assert.deepEqual(row.icon, { id: 'error', color: 'error' });
    assert.equal(row.contextValue, 'exchange.broken');
    assert.match(row.tooltip, /rules: section-unclosed/);
    // Rows of one session differ in their first words, not past the width of the view.
    const rows = [
      x({ summary: summary(1) }),
      x({ servedProvider: 'Fireworks', summary: { ...summary(0), provider: 'Fireworks', finishReason: 'tool_calls' } }),
      x({ status: 502 }),
    ].map((e) => exchangeRow(e).label);
    assert.match(rows[0], /^Chutes · stop · 1 finding · /);
    assert.match(rows[1], /^Fireworks · tool_calls · \d\d:/, 'a healthy row has no count');
    assert.match(rows[2], /^openrouter · HTTP 502 · /, 'no served provider yet: the route');
    assert.match(
      exchangeRow(x({ requestModel: undefined, method: 'GET', path: '/v1/models?x=1' })).label,
      /^openrouter · GET \/v1\/models · HTTP 200 · /,
    );
  });

  it('says why a filtered or broken-only tree shows nothing, as its one row', () => {
    assert.equal(
      emptyTreeMessage({ shown: 0, filter: 'provider fireworks', brokenOnly: false, anyCaptured: true }),
      'No captures match the filter (provider fireworks).',
    );
    assert.match(emptyTreeMessage({ shown: 0, brokenOnly: true, anyCaptured: true })!, /^No broken exchanges/);
    assert.equal(
      emptyTreeMessage({ shown: 2, filter: 'provider fireworks', brokenOnly: false, anyCaptured: true }),
      undefined,
      'rows shown: no message',
    );
    assert.equal(emptyTreeMessage({ shown: 0, brokenOnly: false, anyCaptured: false }), undefined, 'nothing captured: the welcome text');
  });

  it('shows streaming, unanalysed, warning and healthy states with distinct icons', () => {
    assert.equal(statusIcon(x({ state: 'streaming', status: undefined })).id, 'loading');
    assert.equal(statusIcon(x()).id, 'circle-outline');
    assert.equal(statusIcon(x({ summary: summary(0, 1) })).id, 'warning');
    assert.equal(statusIcon(x({ summary: summary(0) })).id, 'pass');
  });

  it('groups sessions newest first and filters to broken exchanges', () => {
    const a = x({ sessionId: 'old', summary: summary(0) });
    const b = x({ sessionId: 'new', summary: summary(1) });
    const c = x({ sessionId: 'new', summary: summary(0) });
    const all = groupSessions([a, b, c]);
    assert.deepEqual(
      all.map((s) => s.id),
      ['new', 'old'],
    );
    assert.deepEqual(
      all[0].exchanges.map((e) => e.id),
      [c.id, b.id],
    );
    assert.match(all[0].description, /2 exchanges · 1 broken/);
    const broken = groupSessions([a, b, c], true);
    assert.deepEqual(
      broken.map((s) => s.id),
      ['new'],
    );
    assert.deepEqual(
      broken[0].exchanges.map((e) => e.id),
      [b.id],
    );
  });

  it('writes the status bar line', () => {
    const list = [x({ summary: summary(1) }), x({ summary: summary(0) })];
    assert.equal(statusBarText({ state: 'running', port: 8719 }, list), '$(radio-tower) Tokenscope :8719 · 2 captured · 1 broken');
    assert.equal(statusBarText({ state: 'failed', reason: 'EADDRINUSE' }, []), '$(error) Tokenscope · 0 captured');
  });

  it('marks demo captures in the tree and the status bar', () => {
    const demo = x({ route: 'demo', servedProvider: 'Demo (local)', summary: { ...summary(3), provider: 'Demo (local)' } });
    const real = x({ summary: summary(1) });
    const row = exchangeRow(demo);
    assert.match(row.label, /^Demo \(local\) · stop · 3 findings · /);
    assert.equal(row.description, 'moonshotai/kimi-k2-0905 · demo');
    assert.match(row.tooltip, /demo capture from Tokenscope's built-in local upstream/);
    assert.doesNotMatch(exchangeRow(real).description, /demo/);
    assert.doesNotMatch(exchangeRow(real).tooltip, /demo capture/);
    assert.equal(
      statusBarText({ state: 'running', port: 8719 }, [demo, real]),
      '$(radio-tower) Tokenscope :8719 · 2 captured (1 demo) · 2 broken',
    );
  });
});

describe('live rows', () => {
  it('shows bytes and seconds so far, and a silence once it is worth a word', () => {
    assert.equal(liveText({ bytes: 3200, ageMs: 12_400, quietMs: 800, started: true }), '3.2 kB · 12 s');
    assert.equal(liveText({ bytes: 3200, ageMs: 54_000, quietMs: 42_300, started: true }), '3.2 kB · 54 s · no bytes for 42 s');
    assert.equal(liveText({ bytes: 0, ageMs: 9000, quietMs: 9000, started: false }), '0 B · 9 s · no response for 9 s');
    const row = exchangeRow(x({ state: 'streaming', status: 200 }), { bytes: 25, ageMs: 2000, quietMs: 100, started: true });
    assert.match(row.label, /^openrouter · streaming · 25 B · 2 s · \d\d:/);
    assert.equal(row.icon.spin, true);
    assert.match(exchangeRow(x({ state: 'streaming', status: 200 })).label, /^openrouter · streaming… · /);
  });
});

describe('changes made by another process', () => {
  it('change the list signature when a capture is added, finished, analysed or removed, and only then', () => {
    const a = x({ state: 'streaming', status: undefined });
    const b = x({ summary: summary(1) });
    const list = [b, a];
    const sig = storeSignature(list);
    assert.equal(storeSignature([{ ...b }, { ...a }]), sig, 'the same captures: the same signature');
    const finished = { ...a, state: 'complete' as const, status: 200 };
    assert.notEqual(storeSignature([b, finished]), sig);
    assert.notEqual(storeSignature([b, { ...finished, summary: summary(0) }]), storeSignature([b, finished]));
    assert.notEqual(storeSignature([b]), sig);
    assert.notEqual(storeSignature([x(), b, a]), sig);
  });
});

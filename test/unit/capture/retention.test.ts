/**
 * Retention never trusts the wall clock alone (src/core/capture/retention.ts): a clock 31 days ahead at start once
 * deleted 271 of 272 captures. Age is judged by the captures' own times, a run removes at most a tenth of the captures
 * it found on its own (and says what it held back and how to remove it), and a clock far ahead of the newest capture,
 * or jumping ahead during a run, removes nothing by age. The store takes its clocks as an option, so they are faked.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliLines as cli } from '../../helpers/cli-main';
import { openStore } from '../../../src/core/capture/store';
import type { RetentionClock } from '../../../src/core/capture/retention';
import { tempDir } from '../proxy/local-upstream';
import { seedExchanges } from './db-helpers';

const DAY = 86_400_000;

/** A clock `offset` ms off the real one, whose wall time can be made to jump (`jump`) while the monotonic one does not. */
function fakeClock(offset: number): RetentionClock & { jump(ms: number): void } {
  let skew = offset;
  return { now: () => Date.now() + skew, monotonic: () => performance.now(), jump: (ms) => (skew += ms) };
}

const init = (startedAt?: number) => ({
  route: 'openrouter',
  upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
  method: 'POST',
  path: '/openrouter/v1/chat/completions',
  requestHeaders: { 'content-type': 'application/json' },
  requestBody: '{"model":"m/one"}',
  ...(startedAt !== undefined && { startedAt }),
});

test('a start with the clock 31 days ahead removes nothing and says why; a capture recorded then removes nothing by age either', async () => {
  const tmp = tempDir();
  try {
    // 272 captures over the last 10 days, as the user who found it had.
    seedExchanges(tmp.dir, 272, (i) => ({ startedAt: Date.now() - (272 - i) * Math.floor((10 * DAY) / 272) }));
    const warnings: string[] = [];
    const clock = fakeClock(31 * DAY);
    const store = await openStore(tmp.dir, { analyze: false, clock, onWarning: (m) => warnings.push(m) });
    assert.equal(store.list().length, 272, 'nothing removed at start');
    assert.ok(
      warnings.some((m) =>
        /^retention: the clock \(\d{4}-\d\d-\d\d\) is 31 days ahead of the newest capture \(\d{4}-\d\d-\d\d\), so this start removes nothing/.test(
          m,
        ),
      ),
      warnings.join('\n'),
    );
    assert.ok(!warnings.some((m) => /retention removed/.test(m)), warnings.join('\n'));
    // A capture recorded with the wrong clock is the newest now: judged by it, every other capture would be too old.
    const w = store.begin(init(clock.now()));
    w.responseStarted(200, {});
    w.chunk(Buffer.from('{}'));
    await w.finish();
    assert.equal(store.list().length, 273, 'nothing removed for the capture recorded with the clock ahead');
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('age is judged by the captures themselves, one run removes at most a tenth of them, and `captures --prune` removes the rest', async () => {
  const tmp = tempDir();
  try {
    // 100 captures one a day up to now (the clock is right): 69 started more than 30 days before the newest.
    const base = Date.now() - 1000;
    seedExchanges(tmp.dir, 100, (i) => ({ startedAt: base - (99 - i) * DAY }));
    const warnings: string[] = [];
    const store = await openStore(tmp.dir, { analyze: false, clock: fakeClock(0), onWarning: (m) => warnings.push(m) });
    assert.equal(store.list().length, 90, 'a tenth of the 100 went at start');
    assert.ok(warnings.includes('retention removed 10 captures (10 older than 30 days; 12 KiB freed)'), warnings.join('\n'));
    assert.ok(
      warnings.includes(
        'retention held back 59 captures older than 30 days: one run removes at most 10% of the captures it found on its own; `tokenscope captures --prune` removes them',
      ),
      warnings.join('\n'),
    );
    const oldest = store.list().at(-1)!;
    assert.ok(Date.now() - oldest.startedAt > 80 * DAY, 'the oldest went first');
    // Each capture the run adds lets one more go, no more.
    const w = store.begin(init());
    w.responseStarted(200, {});
    w.chunk(Buffer.from('{}'));
    await w.finish();
    const before = store.list();
    assert.equal(before.length, 91);
    await store.close();

    // The same data dir with the clock 40 days behind: only what is older than 30 days before that clock may go, a
    // tenth of the 91 at most.
    const behind = await openStore(tmp.dir, { analyze: false, clock: fakeClock(-40 * DAY), onWarning: () => undefined });
    const count = behind.list().length;
    const still = new Set(behind.list().map((x) => x.id));
    const removed = before.filter((x) => !still.has(x.id));
    assert.ok(removed.length <= 9, `${removed.length} removed`);
    assert.ok(
      removed.every((x) => x.startedAt < Date.now() - 70 * DAY),
      'only what is 30 days older than the clock behind',
    );
    await behind.close();

    const pruned = await cli(['captures', '--prune', '--data-dir', tmp.dir]);
    assert.equal(pruned.code, 0, pruned.err);
    assert.match(pruned.out, /^removed \d+ captures from /);
    const left = await openStore(tmp.dir, { analyze: false, readOnly: true });
    const kept = left.list();
    await left.close();
    assert.ok(count > kept.length, 'prune removed what was held back');
    assert.ok(
      kept.every((x) => Date.now() - x.startedAt <= 31 * DAY),
      `${kept.length} kept, all from the last 30 days`,
    );
    assert.equal(kept.length, 31, 'the 30 seeded in the 30 days before the newest capture, and that one (just recorded)');
  } finally {
    tmp.remove();
  }
});

test('a clock that jumps ahead while the store is open removes nothing by age, and says so', async () => {
  const tmp = tempDir();
  try {
    seedExchanges(tmp.dir, 20, (i) => ({ startedAt: Date.now() - (20 - i) * DAY }));
    const warnings: string[] = [];
    const clock = fakeClock(0);
    const store = await openStore(tmp.dir, { analyze: false, clock, onWarning: (m) => warnings.push(m) });
    assert.equal(store.list().length, 20);
    clock.jump(45 * DAY);
    for (let i = 0; i < 3; i++) {
      const w = store.begin(init(clock.now()));
      w.responseStarted(200, {});
      w.chunk(Buffer.from('{}'));
      await w.finish();
    }
    assert.equal(store.list().length, 23, 'nothing removed after the jump');
    assert.ok(
      warnings.some((m) =>
        /^retention: the clock moved 45 days ahead while Tokenscope ran \(set forward, or the machine slept\), so no capture is removed for its age until the next start$/.test(
          m,
        ),
      ),
      warnings.join('\n'),
    );
    await store.close();
  } finally {
    tmp.remove();
  }
});

test('in a run, captures removed to stay under the size limit are paid for by the bytes the run added: one big capture replaces many small ones', async () => {
  const tmp = tempDir();
  try {
    // 50 small captures (1154 bytes each as retention counts them: 100 + 30 + a 1024 allowance), just under 60,000.
    seedExchanges(tmp.dir, 50);
    const warnings: string[] = [];
    const store = await openStore(tmp.dir, { analyze: false, retention: { maxBytes: 60_000 }, onWarning: (m) => warnings.push(m) });
    assert.equal(store.list().length, 50);
    const w = store.begin(init());
    w.responseStarted(200, {});
    w.chunk(Buffer.alloc(20_000, 0x61));
    const big = await w.finish();
    // 21 KB more: 17 small ones must go, more than the run's share of 5 plus 1 for the capture added.
    const kept = store.list();
    assert.ok(
      kept.some((x) => x.id === big.id),
      'the big capture stays',
    );
    assert.equal(kept.length, 51 - 17, warnings.join('\n'));
    assert.ok(!warnings.some((m) => /held back/.test(m)), warnings.join('\n'));
    assert.ok(
      warnings.some((m) => /^retention removed 17 captures \(17 oldest to stay under 59 KiB; 20 KiB freed\)$/.test(m)),
      warnings.join('\n'),
    );
    await store.close();
  } finally {
    tmp.remove();
  }
});

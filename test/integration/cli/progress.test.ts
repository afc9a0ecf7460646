// Progress on stderr for long work (`compare`, `verify`): a rewritten line with rate and ETA on a terminal, nothing
// when stderr is piped (the CLI's io then has no `progress`).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { clock, progressOf } from '../../../src/cli/progress';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';

/** An io like a terminal's: `events` lists progress draws (`P:` line, `P:-` erase) and stderr lines (`E:`) in order. */
function terminalIo(tty: boolean): CliIO & { events: string[]; out: (t: string) => void; stdout: string[] } {
  const events: string[] = [];
  const stdout: string[] = [];
  return {
    events,
    stdout,
    out: (t) => stdout.push(t),
    err: (t) => events.push(`E:${t}`),
    ...(tty && { progress: (l: string | undefined) => events.push(l === undefined ? 'P:-' : `P:${l}`) }),
  };
}

test('the progress line: rate and ETA, throttled, notes above it, erased at the end; nothing without a terminal', () => {
  let now = 0;
  const io = terminalIo(true);
  const p = progressOf(io, 'verify', () => now);
  now = 1000;
  p.update(10, 40, 1);
  now = 1100;
  p.update(11, 40, 1); // within 250 ms: not redrawn
  p.note('  chutes #1: stop');
  now = 2000;
  p.update(40, 40, 1); // the end is always drawn
  p.clear();
  assert.deepEqual(io.events, [
    'P:verify: 10/40 done, 1 failed, 10/s, ETA 3s',
    'P:-',
    'E:  chutes #1: stop',
    'P:verify: 10/40 done, 1 failed, 10/s, ETA 3s',
    'P:verify: 40/40 done, 1 failed, 20/s',
    'P:-',
  ]);

  const piped = terminalIo(false);
  const q = progressOf(piped, 'verify', () => (now += 1000));
  q.update(1, 2, 0);
  q.clear();
  assert.deepEqual(piped.events, []);
  assert.deepEqual([clock(42), clock(185), clock(7800)], ['42s', '3m05s', '2h10m']);
});

test('verify and compare draw progress on a terminal and print none when piped', async () => {
  const emu = await startOpenRouterEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-progress-'));
  const samples = join(dir, 'samples.jsonl');
  const req = (content: string) => ({ model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content }] });
  writeFileSync(samples, ['a', 'b', 'c'].map((c) => JSON.stringify(req(c))).join('\n') + '\n');
  writeFileSync(join(dir, 'request.json'), JSON.stringify(req('hi')));
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
  try {
    for (const tty of [true, false]) {
      const v = terminalIo(tty);
      assert.equal(await main(['verify', samples, '--provider', 'chutes', '--openrouter-url', emu.url], v), 0, v.events.join('\n'));
      const c = terminalIo(tty);
      assert.equal(
        await main(
          [
            'compare',
            '--request',
            join(dir, 'request.json'),
            '--providers',
            'fireworks,chutes',
            '--samples',
            '2',
            '--openrouter-url',
            emu.url,
          ],
          c,
        ),
        0,
        c.events.join('\n'),
      );
      if (tty) {
        assert.ok(
          v.events.some((e) => /^P:verify: 3\/3 done, [\d.]+\/s$/.test(e)),
          v.events.join('\n'),
        );
        assert.equal(v.events.at(-1), 'P:-', 'the line is erased before the report');
        assert.ok(
          c.events.some((e) => /^P:compare: \d\/4 done, [\d.]+\/s(, ETA \d+s)?$/.test(e)),
          c.events.join('\n'),
        );
        assert.equal(c.events.filter((e) => /^E: {2}(fireworks|chutes) #\d: /.test(e)).length, 4, 'each sample above the line');
        assert.equal(c.events.at(-1), 'P:-');
      } else {
        assert.deepEqual(
          v.events.filter((e) => e.startsWith('P:') || /done/.test(e)),
          [],
          'nothing when piped',
        );
        assert.deepEqual(
          c.events.filter((e) => e.startsWith('P:') || / #\d: /.test(e)),
          [],
          'nothing when piped',
        );
      }
      assert.ok(v.stdout.join('').length > 0 && c.stdout.join('').length > 0, 'the reports are printed');
    }
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

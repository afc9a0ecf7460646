import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import { startOpenRouterEmulator } from '../../fixtures/openrouter-emulator';

const TOOLS = [
  {
    type: 'function',
    function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  },
];
const line = (content: string, tools?: unknown) =>
  JSON.stringify({
    model: 'moonshotai/kimi-k2-0905',
    messages: [
      { role: '_input', content: 'You are an agent.' },
      { role: 'user', content },
    ],
    ...(tools ? { tools } : {}),
  });

test('verify CLI: K2VV metrics against a reference, findings per rule, bad lines skipped with a warning', async () => {
  const emu = await startOpenRouterEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-verify-'));
  const file = join(dir, 'samples.jsonl');
  // Three tool requests and one prose request, plus a broken line.
  writeFileSync(file, [line('a', TOOLS), line('b', TOOLS), '{"messages": [', line('c', TOOLS), line('hello')].join('\n') + '\n');
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
  try {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['verify', file, '--provider', 'together', '--reference', 'fireworks', '--openrouter-url', emu.url, '--json'], {
      out: (s) => out.push(s),
      err: (s) => err.push(s),
    });
    assert.equal(code, 0, err.join('\n'));
    assert.match(err.join('\n'), /samples\.jsonl:3 skipped: not JSON/);
    const r = JSON.parse(out.join(''));
    assert.equal(r.total, 4);
    // Together (emulated) truncates arguments but triggers exactly like the reference:
    // TP 3 (tool requests), TN 1 (prose) → F1 100 %; schema 0 of 3 valid.
    assert.deepEqual([r.trigger.tp, r.trigger.fp, r.trigger.fn, r.trigger.tn, r.trigger.f1], [3, 0, 0, 1, 1]);
    assert.deepEqual(r.schema, { finishToolCalls: 3, successful: 0, failed: 3, accuracy: 0 });
    assert.equal(r.summary.finishStop, 1);
    assert.ok(
      Object.values(r.findingsByRule).some((n) => n === 3),
      `a rule flags all three truncated calls: ${JSON.stringify(r.findingsByRule)}`,
    );
    const sent = emu.requests.filter((q) => q.path.endsWith('/chat/completions'));
    assert.equal(sent.length, 8, 'each request to the provider and to the reference');
    assert.ok(
      sent.every((q) => q.body.messages[0].role === 'system'),
      'the K2VV `_input` role becomes system',
    );

    const text: string[] = [];
    assert.equal(
      await main(['verify', file, '--provider', 'chutes', '--openrouter-url', emu.url], { out: (s) => text.push(s), err: () => {} }),
      0,
    );
    const t = text.join('\n');
    assert.match(t, /schema accuracy n\/a \(0\/0 tool_calls finishes valid\)/);
    assert.match(t, /trigger +n\/a \(pass --reference SLUG/);

    // A misspelt provider or reference is refused before anything is sent (it would only score errors).
    const before = emu.requests.filter((q) => q.path.endsWith('/chat/completions')).length;
    for (const argv of [
      ['--provider', 'togther'],
      ['--provider', 'together', '--reference', 'firewroks'],
    ]) {
      const bad: string[] = [];
      assert.equal(
        await main(['verify', file, ...argv, '--openrouter-url', emu.url], { out: (s) => bad.push(s), err: (s) => bad.push(s) }),
        2,
      );
      assert.match(
        bad.join('\n'),
        /"(togther|firewroks)" does not serve moonshotai\/kimi-k2-0905 on OpenRouter; its providers: fireworks, /,
      );
    }
    assert.equal(emu.requests.filter((q) => q.path.endsWith('/chat/completions')).length, before, 'nothing was sent');
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
});

test('verify --min-schema / --min-f1: a provider that breaks every call exits 1 with one line saying why', async () => {
  const emu = await startOpenRouterEmulator({ latencyMs: 0, chunkDelayMs: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-verify-'));
  const file = join(dir, 'samples.jsonl');
  writeFileSync(file, [line('a', TOOLS), line('b', TOOLS), line('c', TOOLS), line('hello')].join('\n') + '\n');
  const saved = process.env.OPENROUTER_API_KEY;
  process.env.OPENROUTER_API_KEY = 'sk-or-v1-test';
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['verify', file, ...argv, '--openrouter-url', emu.url], { out: (s) => out.push(s), err: (s) => err.push(s) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  try {
    // AtlasCloud (emulated) is down: every call fails, so there is no tool_calls finish to score.
    const down = await run('--provider', 'atlas-cloud', '--min-schema', '0.9');
    assert.equal(down.code, 1, down.err);
    assert.deepEqual(
      down.err.split('\n').filter((l) => l.startsWith('tokenscope verify:')),
      [
        'tokenscope verify: atlas-cloud: schema accuracy n/a, below --min-schema 90%: no response finished with tool_calls (4 of 4 requests failed)',
      ],
    );
    const downRef = await run('--provider', 'atlas-cloud', '--reference', 'fireworks', '--min-f1', '95%', '--json');
    assert.equal(downRef.code, 1);
    assert.match(downRef.err, /^tokenscope verify: atlas-cloud: trigger F1 0% vs fireworks below --min-f1 95% \(tp 0, fp 0, fn 3\)$/m);
    assert.deepEqual(JSON.parse(downRef.out).belowThresholds.length, 1);

    // Together (emulated) triggers like the reference (F1 100%) but truncates every call's arguments (schema 0%).
    const together = await run('--provider', 'together', '--reference', 'fireworks', '--min-f1', '0.9', '--min-schema', '50%');
    assert.equal(together.code, 1);
    assert.match(
      together.err,
      /^tokenscope verify: together: schema accuracy 0% \(0\/3 tool_calls finishes valid\) below --min-schema 50%$/m,
    );
    assert.doesNotMatch(together.err, /trigger F1/);

    // A provider that meets both marks exits 0.
    const good = await run('--provider', 'fireworks', '--reference', 'novita', '--min-f1', '0.9', '--min-schema', '0.9');
    assert.equal(good.code, 0, good.err);
    assert.doesNotMatch(good.err, /tokenscope verify:/);

    // Marks that cannot apply are refused before anything is sent.
    const before = emu.requests.length;
    assert.equal((await run('--provider', 'fireworks', '--min-f1', '0.9')).code, 2);
    assert.match(
      (await run('--provider', 'fireworks', '--min-schema', '120')).err,
      /--min-schema takes a share from 0 to 1 \(0\.95\) or a percentage \(95%\); got "120"/,
    );
    assert.equal(emu.requests.length, before, 'nothing was sent');
  } finally {
    if (saved === undefined) delete process.env.OPENROUTER_API_KEY;
    else process.env.OPENROUTER_API_KEY = saved;
    rmSync(dir, { recursive: true, force: true });
    await emu.close();
  }
});

/**
 * Provider policy, live: `tokenscope policy set` run from another process while `tokenscope serve` streams a slow
 * response. The stream in flight finishes byte for byte as the upstream sent it; the next request (and a variant of
 * the model, `:exacto`) reaches the upstream with the new `provider` object, without a restart; `policy rm` undoes it
 * just as live. And two processes setting policies at the same moment lose no write.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readStoredPolicies, updateStoredPolicies } from '../../../src/core/policy/stored';
import { repoRoot } from '../../helpers/shared';
import { TS_LOADER } from '../../helpers/ts-loader';
import { exited, rawRequest, serveChild, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';

const K2 = 'moonshotai/kimi-k2-0905';

/** Runs Node code with the TypeScript sources in a child process; its exit code and output. */
function child(code: string, timeoutMs = 120_000): { done: Promise<{ code: number | null; out: string }>; out: () => string } {
  const c = spawn(process.execPath, [...TS_LOADER, '--eval', code], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  c.stdout!.on('data', (d) => (out += d));
  c.stderr!.on('data', (d) => (out += d));
  const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
  return { done: exited(c).then((code) => (clearTimeout(timer), { code, out })), out: () => out };
}

const cli = (args: string[]) => child(`require('./src/cli/main').main(${JSON.stringify(args)}).then((c) => process.exit(c))`).done;

test('policy set while serve streams: the stream in flight is untouched, the next request and a variant carry the new provider object, rm undoes it', {
  timeout: 300_000,
}, async () => {
  const seen: { body: Buffer; at: number }[] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const events = Array.from({ length: 12 }, (_, i) => `data: {"id":"gen-1","choices":[{"index":0,"delta":{"content":"part ${i} "}}]}\n\n`);
  const up = await startUpstream((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(parts);
      seen.push({ body, at: Date.now() });
      if (JSON.parse(body.toString()).stream !== true) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"id":"gen-2","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}');
        return;
      }
      // A slow stream: half now, the rest once the test has changed the policy and sent its other requests.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const e of events.slice(0, 6)) res.write(e);
      await released;
      for (const e of events.slice(6)) {
        res.write(e);
        await new Promise((r) => setTimeout(r, 20));
      }
      res.end('data: [DONE]\n\n');
    });
  });
  const tmp = tempDir();
  const data = join(tmp.dir, 'data');
  const s = await serveChild(['--port', '0', '--data-dir', data, '--openrouter-url', `${up.url}/api`]);
  const send = (body: string) =>
    rawRequest(`${s.url}/openrouter/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-or-v1-livepolicy0123' },
      body,
    });
  try {
    const streamBody = JSON.stringify({
      model: K2,
      stream: true,
      messages: [{ role: 'user', content: 'slow' }],
      provider: { sort: 'price' },
    });
    const streaming = send(streamBody);
    await waitFor(() => seen.length === 1, 'the upstream to get the streaming request', 60_000);

    const set = await cli(['policy', 'set', K2, '--ignore', 'chutes', '--data-dir', data]);
    assert.equal(set.code, 0, set.out);
    const setAt = Date.now();
    assert.match(set.out, /^moonshotai\/kimi-k2-0905: ignore chutes$/m);

    const plain = JSON.stringify({ model: K2, messages: [{ role: 'user', content: 'next' }], provider: { order: ['fireworks'] } });
    assert.equal((await send(plain)).status, 200);
    assert.deepEqual(
      JSON.parse(seen[1].body.toString()).provider,
      { order: ['fireworks'], ignore: ['chutes'] },
      'the next request carries the new policy',
    );
    assert.ok(seen[1].at - setAt < 1000, `applied within a second (${seen[1].at - setAt} ms)`);
    const variant = JSON.stringify({ model: `${K2}:exacto`, messages: [{ role: 'user', content: 'variant' }] });
    assert.equal((await send(variant)).status, 200);
    assert.deepEqual(JSON.parse(seen[2].body.toString()).provider, { ignore: ['chutes'] }, 'a variant follows its base model');

    release();
    const res = await streaming;
    assert.equal(res.error, undefined);
    assert.equal(res.body.toString(), events.join('') + 'data: [DONE]\n\n', 'the stream in flight finished intact');
    assert.ok(seen[0].body.equals(Buffer.from(streamBody)), 'and its request went out before the change, untouched');

    const rm = await cli(['policy', 'rm', K2, '--data-dir', data]);
    assert.equal(rm.code, 0, rm.out);
    assert.equal((await send(plain)).status, 200);
    assert.ok(seen[3].body.equals(Buffer.from(plain)), 'after rm the request reaches the upstream byte for byte');
    await waitFor(
      () => /provider policy changed: 1 model/.test(s.output()) && /provider policy changed: none/.test(s.output()),
      'serve to say the policy changed',
      10_000,
    );
    assert.match(
      s.output(),
      /provider policy changed: 1 model \(from .*policies\.json; followed live\)\n +moonshotai\/kimi-k2-0905: avoid chutes \(OpenRouter routes/,
    );
  } finally {
    release();
    s.child.kill('SIGTERM');
    await exited(s.child);
    await up.close();
    tmp.remove();
  }
});

test("serve --policy FILE is followed live too, and a stored policy wins over the file's for the same model", {
  timeout: 300_000,
}, async () => {
  const seen: Buffer[] = [];
  const up = await startUpstream((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c) => parts.push(c));
    req.on(
      'end',
      () => (seen.push(Buffer.concat(parts)), res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}')),
    );
  });
  const tmp = tempDir();
  const data = join(tmp.dir, 'data');
  const file = join(tmp.dir, 'policy.json');
  writeFileSync(file, JSON.stringify({ 'qwen/qwen3-coder': { order: ['novita'] } }));
  const s = await serveChild(['--port', '0', '--data-dir', data, '--openrouter-url', `${up.url}/api`, '--policy', file]);
  const provider = async (model: string) => {
    assert.equal(
      (
        await rawRequest(`${s.url}/openrouter/v1/chat/completions`, {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [] }),
        })
      ).status,
      200,
    );
    return JSON.parse(seen.at(-1)!.toString()).provider;
  };
  const settle = () => new Promise((r) => setTimeout(r, 300)); // past the 250 ms between two looks at the files
  try {
    assert.deepEqual(await provider('qwen/qwen3-coder'), { order: ['novita'] });
    writeFileSync(file, JSON.stringify({ 'qwen/qwen3-coder': { order: ['together'] } }));
    await settle();
    assert.deepEqual(await provider('qwen/qwen3-coder'), { order: ['together'] }, 'the edited file applies without a restart');
    await updateStoredPolicies(data, (p) => ({ ...p, 'qwen/qwen3-coder': { ignore: ['novita'] } }));
    await settle();
    assert.deepEqual(await provider('qwen/qwen3-coder'), { ignore: ['novita'] }, 'the stored policy wins');
    writeFileSync(file, '{ broken');
    await settle();
    await updateStoredPolicies(data, () => ({}));
    await settle();
    assert.deepEqual(await provider('qwen/qwen3-coder'), { order: ['together'] }, 'a broken file: the policies read before stay');
    await waitFor(
      () => /policy\.json is not JSON: .*; the policy file .* read before stay in force until it is fixed/.test(s.output()),
      'serve to warn about the broken file',
      10_000,
    );
  } finally {
    s.child.kill('SIGTERM');
    await exited(s.child);
    await up.close();
    tmp.remove();
  }
});

test('two processes setting policies at the same moment: no write is lost', { timeout: 300_000 }, async () => {
  const tmp = tempDir();
  const go = join(tmp.dir, 'go');
  const N = 25;
  // Each waits for the go file (so both are running when it appears), then sets N policies of its own, one by one.
  const writer = (tag: string) =>
    child(`
      const { existsSync } = require('node:fs');
      const { updateStoredPolicies } = require('./src/core/policy/stored');
      (async () => {
        process.stdout.write('ready\\n');
        for (const until = Date.now() + 60000; !existsSync(${JSON.stringify(go)}) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 2));
        for (let i = 0; i < ${N}; i++) await updateStoredPolicies(${JSON.stringify(tmp.dir)}, (p) => ({ ...p, ['${tag}/model-' + i]: { ignore: ['p' + i] } }));
        process.exit(0);
      })().catch((e) => (console.error(e.message), process.exit(1)));`);
  try {
    const a = writer('a');
    const b = writer('b');
    await waitFor(() => a.out().includes('ready') && b.out().includes('ready'), 'both writers to start', 120_000);
    writeFileSync(go, '');
    const [ra, rb] = await Promise.all([a.done, b.done]);
    assert.equal(ra.code, 0, ra.out);
    assert.equal(rb.code, 0, rb.out);
    const stored = readStoredPolicies(tmp.dir);
    const expected = ['a', 'b'].flatMap((t) => Array.from({ length: N }, (_, i) => `${t}/model-${i}`)).sort();
    assert.deepEqual(Object.keys(stored).sort(), expected, 'every write of both processes is there');
  } finally {
    tmp.remove();
  }
});

/**
 * Crash safety: `tokenscope serve` is killed with SIGKILL mid-stream; after a restart everything that had arrived
 * is in the store, marked incomplete. The serving process is a real child (`tokenscope serve` run through tsx).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { test } from 'node:test';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cliLines as cli } from '../../helpers/cli-main';
import { openStore } from '../../../src/core/capture/store';
import { decodeFrames } from '../../../src/core/capture/log';
import { containsSecret } from '../../../src/core/redact';
import { exited, serveChild as serve, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';

test('SIGKILL mid-stream, restart: every byte the client saw is stored, the exchange is incomplete', async () => {
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const timer = setInterval(() => res.write(`data: {"i":${i++}}\n\n`), 10);
    res.once('close', () => clearInterval(timer));
  });
  const data = tempDir();
  let first: ChildProcess | undefined;
  let second: ChildProcess | undefined;
  try {
    const s1 = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    first = s1.child;
    let seen = Buffer.alloc(0);
    const cut = new Promise<void>((resolve) => {
      const req = request(
        `${s1.url}/v1/chat/completions`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.on('data', (c: Buffer) => {
            seen = Buffer.concat([seen, c]);
            if (seen.length > 200 && s1.child.exitCode === null && !s1.child.killed) s1.child.kill('SIGKILL');
          });
          res.once('error', () => resolve());
          res.once('close', () => resolve());
        },
      );
      req.once('error', () => resolve());
      req.end('{"model":"moonshotai/kimi-k2-0905","stream":true}');
    });
    await cut;
    await exited(s1.child);
    assert.equal(s1.child.signalCode, 'SIGKILL');

    // Restart on the same data dir: it must come up and load the interrupted exchange.
    const s2 = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    second = s2.child;
    s2.child.kill('SIGTERM');
    const code = await exited(s2.child);
    assert.equal(code, 0, s2.output());

    const store = await openStore(data.dir, { analyze: false });
    const [x] = store.list();
    assert.equal(store.list().length, 1);
    assert.equal(x.state, 'incomplete');
    assert.equal(x.requestModel, 'moonshotai/kimi-k2-0905');
    assert.match(x.error!, /interrupted/);
    const stored = Buffer.from(store.readResponse(x.id)!.bytes);
    assert.ok(stored.length >= seen.length, `stored ${stored.length} bytes, the client saw ${seen.length}`);
    assert.ok(stored.subarray(0, seen.length).equals(seen), 'the stored body starts with exactly what the client saw');
    await store.close();

    // The CLI reads it back too, and `captures` gives the same findings as `show` (the restart analysed it).
    const listed = await cli(['captures', '--data-dir', data.dir]);
    assert.equal(listed.code, 0);
    assert.match(listed.out, new RegExp(`${x.id}.*200 incomplete`));
    const shown = await cli(['show', x.id, '--data-dir', data.dir]);
    assert.equal(shown.code, 0, shown.err);
    const findings = /^findings +(.+)$/m.exec(shown.out)?.[1];
    assert.ok(findings && findings !== 'not analysed', shown.out);
    assert.ok(listed.out.trimEnd().endsWith(`  ${findings}`), `captures says "${listed.out.trim()}", show says "${findings}"`);
  } finally {
    for (const c of [first, second]) if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await up.close();
    await waitFor(() => [first, second].every((c) => !c || c.exitCode !== null || c.signalCode !== null), 'children to exit');
    data.remove();
  }
});

const KEY = 'sk-proj-AbCdEfGhIjKlMnOp0123456789';

/** The text deltas of a chat SSE body, joined (what `show` and the exports reassemble). */
function joinedContent(body: string): string {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => (JSON.parse(l.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '')
    .join('');
}

test('SIGKILL mid-stream after the model spelled a key in pieces: no key on disk after the restart, nor in show or export', {
  timeout: 300_000,
}, async () => {
  const text = `Your key is ${KEY}, keep it safe.`;
  const events = Array.from(
    { length: Math.ceil(text.length / 3) },
    (_, i) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text.slice(i * 3, i * 3 + 3) } }] })}\n\n`,
  );
  // The whole text, then nothing more: the stream stays open until the proxy is killed.
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const timer = setInterval(() => (i < events.length ? res.write(events[i++]) : clearInterval(timer)), 5);
    res.once('close', () => clearInterval(timer));
  });
  const data = tempDir();
  const children: ChildProcess[] = [];
  try {
    const s1 = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    children.push(s1.child);
    const whole = events.join('');
    let seen = '';
    await new Promise<void>((resolve) => {
      const req = request(
        `${s1.url}/v1/chat/completions`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.on('data', (c: Buffer) => {
            seen += c.toString();
            if (seen.length >= whole.length && s1.child.exitCode === null && !s1.child.killed) s1.child.kill('SIGKILL');
          });
          res.once('error', () => resolve());
          res.once('close', () => resolve());
        },
      );
      req.once('error', () => resolve());
      req.end('{"model":"moonshotai/kimi-k2-0905","stream":true}');
    });
    await exited(s1.child);
    assert.equal(s1.child.signalCode, 'SIGKILL');
    assert.equal(joinedContent(seen), text, 'the client got the key (the bytes forwarded are never touched)');
    const [file] = readdirSync(join(data.dir, 'bodies'));
    const id = file.replace(/\.cap$/, '');
    assert.ok(
      joinedContent(Buffer.from(decodeFrames(readFileSync(join(data.dir, 'bodies', file))).response).toString()).includes(KEY),
      'the kill left the key in clear (the pass never ran)',
    );

    // Before any restart, a reader shows the stopped stream masked.
    const early = await cli(['show', id, '--json', '--data-dir', data.dir]);
    assert.equal(early.code, 0, early.err);
    assert.ok(!early.out.includes(KEY) && !containsSecret(early.out), 'show masks a stopped stream it reads before any restart');

    const s2 = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url]);
    children.push(s2.child);
    s2.child.kill('SIGTERM');
    assert.equal(await exited(s2.child), 0, s2.output());

    const body = Buffer.from(decodeFrames(readFileSync(join(data.dir, 'bodies', file))).response).toString();
    assert.equal(body.length, whole.length, 'masked to the same length');
    const content = joinedContent(body);
    assert.ok(!content.includes(KEY) && !containsSecret(content), `the body file holds the key: ${content}`);
    assert.ok(content.startsWith('Your key is [REDACTED:openai-key]'), content);

    const store = await openStore(data.dir, { analyze: false, readOnly: true });
    const x = store.get(id)!;
    await store.close();
    assert.equal(x.state, 'incomplete');
    assert.deepEqual(x.masked, { splitKeys: 1, labels: ['openai-key'], where: ['response chat:0:content'] });

    for (const argv of [
      ['show', id],
      ['show', id, '--json'],
      ['export', id, '--format', 'markdown'],
      ['export', id, '--format', 'bundle'],
      ['export', id, '--format', 'har'],
    ]) {
      const r = await cli([...argv, '--data-dir', data.dir]);
      assert.equal(r.code, 0, `${argv.join(' ')}: ${r.err}`);
      assert.ok(!r.out.includes(KEY) && !containsSecret(r.out), `${argv.join(' ')} prints the key`);
      assert.doesNotMatch(r.err, /refused/);
    }
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await up.close();
    await waitFor(() => children.every((c) => c.exitCode !== null || c.signalCode !== null), 'children to exit');
    data.remove();
  }
});

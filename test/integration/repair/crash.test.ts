/**
 * Repair mode is crash-safe like the capture: `tokenscope serve --repair` is killed with SIGKILL mid-stream, after it
 * delivered a leaked call to the agent as structured `tool_calls`; the exchange's delivered copy then holds every
 * byte the agent saw (and the body every byte the upstream sent). A real `serve` child process, a local upstream.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { test } from 'node:test';
import { openStore } from '../../../src/core/capture/store';
import { getFormat } from '../../../src/core/families/index';
import { exited, serveChild as serve, startUpstream, tempDir, waitFor } from '../../unit/proxy/local-upstream';

const MODEL = 'moonshotai/kimi-k2-0905';
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

test('SIGKILL of serve --repair mid-stream: the delivered copy holds every byte the agent saw', async () => {
  // Kimi K2 markup leaked into content, one complete call in a closed section; then the stream stays open (the kill comes mid-stream).
  const r = getFormat('kimi-k2').render({ content: 'Let me look.', toolCalls: [{ index: 0, name: 'read', arguments: '{"path":"a.md"}' }] });
  const text = r.text.slice(0, Math.max(...r.segments.filter((s) => s.kind === 'section' || s.kind === 'call').map((s) => s.end)));
  let upstreamSent = Buffer.alloc(0);
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: MODEL };
    let i = 0;
    const timer = setInterval(() => {
      if (i >= text.length) return;
      const ev = Buffer.from(
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: text.slice(i, i + 5) }, finish_reason: null }] })}\n\n`,
      );
      i += 5;
      upstreamSent = Buffer.concat([upstreamSent, ev]);
      res.write(ev);
    }, 5);
    res.once('close', () => clearInterval(timer));
  });
  const data = tempDir();
  let first: ChildProcess | undefined;
  try {
    const s = await serve(['--port', '0', '--data-dir', data.dir, '--upstream', up.url, '--repair']);
    first = s.child;
    let seen = Buffer.alloc(0);
    await new Promise<void>((resolve) => {
      const req = request(
        `${s.url}/v1/chat/completions`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.on('data', (c: Buffer) => {
            seen = Buffer.concat([seen, c]);
            // The agent has the structured call: kill the proxy before the stream ends.
            if (
              /"tool_calls":\[\{"index":0,"id":"functions\.read:0"/.test(seen.toString('utf8')) &&
              s.child.exitCode === null &&
              !s.child.killed
            )
              s.child.kill('SIGKILL');
          });
          res.once('error', () => resolve());
          res.once('close', () => resolve());
        },
      );
      req.once('error', () => resolve());
      req.end(JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'Read a.md' }], tools: TOOLS }));
    });
    await exited(s.child);
    assert.equal(s.child.signalCode, 'SIGKILL', 'serve was killed mid-stream');
    assert.match(seen.toString('utf8'), /"tool_calls"/, 'the agent got the call structured before the kill');
    assert.doesNotMatch(seen.toString('utf8'), /tool_calls_section_begin|tool_call_begin/, 'and no markup');

    const store = await openStore(data.dir, { analyze: false });
    try {
      const [x] = store.list();
      assert.equal(x.state, 'incomplete');
      const delivered = store.readDelivered(x.id);
      assert.ok(delivered, 'the delivered copy is on disk');
      const d = Buffer.from(delivered);
      assert.ok(d.length >= seen.length, `delivered copy ${d.length} bytes, the agent saw ${seen.length}`);
      assert.ok(d.subarray(0, seen.length).equals(seen), 'the delivered copy starts with exactly what the agent saw');
      const body = Buffer.from(store.readResponse(x.id)!.bytes);
      assert.ok(body.length > 0 && upstreamSent.subarray(0, body.length).equals(body), 'the body is what the upstream sent');
      const content = body
        .toString('utf8')
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => (JSON.parse(l.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0].delta.content ?? '')
        .join('');
      assert.match(content, /<\|tool_calls_section_begin\|>/, 'the body keeps the upstream markup');
    } finally {
      await store.close();
    }
  } finally {
    if (first && first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
    await up.close();
    await waitFor(() => !first || first.exitCode !== null || first.signalCode !== null, 'serve to exit');
    data.remove();
  }
});

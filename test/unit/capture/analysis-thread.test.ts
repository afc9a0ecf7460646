// The analysis worker is ended once idle, so the heap a large analysis grew does not stay with `serve`; the next
// large exchange starts a new one.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { AnalysisThread } from '../../../src/core/capture/analysis-thread';
import { openStore } from '../../../src/core/capture/store';
import { tempDir } from '../proxy/local-upstream';

const SSE = 'data: {"id":"a","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hello"}}]}\n\ndata: {"id":"a","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

test('the analysis worker ends after its idle time and a new one answers the next job', async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir, { analyze: false });
  const thread = new AnalysisThread(100);
  try {
    const w = store.begin({ route: 'default', upstreamUrl: 'http://127.0.0.1:9/v1', method: 'POST', path: '/v1/chat/completions', requestHeaders: {}, requestBody: '{"model":"m","stream":true}' });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    w.chunk(Buffer.from(SSE));
    const x = await w.finish();
    const path = join(tmp.dir, 'bodies', `${x.id}.cap`);

    const first = await thread.analyze(x, path);
    assert.equal(first?.response.message.content, 'hello');
    assert.equal(thread.running, true, 'kept for the next job meanwhile');
    const ended = Date.now() + 5000;
    while (thread.running && Date.now() < ended) await new Promise((r) => setTimeout(r, 20));
    assert.equal(thread.running, false, 'ended once idle');

    const second = await thread.analyze(x, path);
    assert.equal(second?.response.message.content, 'hello', 'a new worker answers');
    assert.equal(thread.running, true);
  } finally {
    await thread.close();
    await store.close();
    tmp.remove();
  }
});

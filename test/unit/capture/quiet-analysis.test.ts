// The analysis of a finished exchange waits while another exchange of this process waits for its upstream's response
// head: an agent sends its next request a moment after the last response ended, and an analysis run then (reading
// the body, a commit) landed inside that request's round trip and held its first byte back. A proxy that is never
// quiet still analyses: the wait is bounded.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { openStore, type CaptureStore } from '../../../src/core/capture/store';
import { OPENROUTER_CHAT } from '../../helpers/exchanges';
import { tempDir } from '../proxy/local-upstream';

const BODY = JSON.stringify({
  id: 'gen-1',
  object: 'chat.completion',
  model: 'moonshotai/kimi-k2-0905',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
});
const REQUEST = JSON.stringify({ model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: 'hi' }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A store in a temp dir that notes when each exchange was analysed. */
async function analysedStore(t: TestContext): Promise<{ store: CaptureStore; analysed: Map<string, number> }> {
  const tmp = tempDir();
  const analysed = new Map<string, number>();
  const store = await openStore(tmp.dir, { onAnalyzed: (x) => analysed.set(x.id, performance.now()) });
  t.after(async () => (await store.close(), tmp.remove()));
  return { store, analysed };
}

/** One complete JSON exchange; resolves with its id and the moment its last byte was recorded. */
async function oneExchange(store: CaptureStore) {
  const x = store.begin({ ...OPENROUTER_CHAT, requestBody: REQUEST });
  x.responseStarted(200, { 'content-type': 'application/json' });
  x.chunk(Buffer.from(BODY));
  const finishedAt = performance.now();
  return { id: (await x.finish()).id, finishedAt };
}

test('an analysis waits for the response head of the next request, then runs', async (t) => {
  const { store, analysed } = await analysedStore(t);

  const { id: firstId } = await oneExchange(store);
  // The agent's next request is on its way to the upstream: no response head yet.
  const next = store.begin({ ...OPENROUTER_CHAT, requestBody: REQUEST });
  await sleep(20);
  assert.equal(analysed.has(firstId), false, 'no analysis while the next request waits for its first byte');
  const headAt = performance.now();
  next.responseStarted(200, { 'content-type': 'application/json' });
  for (let i = 0; i < 100 && !analysed.has(firstId); i++) await sleep(2);
  assert.ok(analysed.has(firstId), 'analysed once the head arrived');
  assert.ok(analysed.get(firstId)! >= headAt, 'and not before');
  next.chunk(Buffer.from(BODY));
  await next.finish();
});

test('an analysis waits at most 50 ms for a response head that does not come', async (t) => {
  const { store, analysed } = await analysedStore(t);

  const { id: firstId, finishedAt } = await oneExchange(store);
  const hanging = store.begin({ ...OPENROUTER_CHAT, requestBody: REQUEST });
  for (let i = 0; i < 200 && !analysed.has(firstId); i++) await sleep(5);
  assert.ok(analysed.has(firstId), 'analysed although the other exchange never got a head');
  const after = analysed.get(firstId)! - finishedAt;
  assert.ok(after >= 45, `it waited for the head first (${after.toFixed(1)} ms)`);
  await hanging.finish({ error: 'upstream hung' });
});

test('a request that has waited longer than that for its head holds no analysis back', async (t) => {
  const { store, analysed } = await analysedStore(t);

  const hanging = store.begin({ ...OPENROUTER_CHAT, requestBody: REQUEST });
  await sleep(80);
  const { id: firstId, finishedAt } = await oneExchange(store);
  for (let i = 0; i < 200 && !analysed.has(firstId); i++) await sleep(2);
  const after = analysed.get(firstId)! - finishedAt;
  assert.ok(after < 40, `analysed without waiting for the hung request (${after.toFixed(1)} ms)`);
  await hanging.finish({ error: 'upstream hung' });
});

/** The upstream body's event order (./src/core/proxy/upstream.ts): what the relay relies on, as a Readable gave it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UpstreamBody } from '../../../src/core/proxy/upstream';

const tick = () => new Promise<void>((r) => setImmediate(r));

function body() {
  const calls: string[] = [];
  const b = new UpstreamBody(
    () => calls.push('resume-upstream'),
    (e) => calls.push(`abort: ${e.message}`),
  );
  return { b, calls };
}

test('reads that arrive before the listeners are delivered in order, then the end, each on a later turn of the tick queue', async () => {
  const { b, calls } = body();
  b.push(Buffer.from('a'));
  b.push(Buffer.from('b'));
  b.end();
  b.on('data', (c) => {
    calls.push(`data ${c}`);
    process.nextTick(() => calls.push(`forward after ${c}`));
  });
  b.once('end', () => calls.push('end'));
  b.once('error', () => calls.push('error'));
  assert.deepEqual(calls, [], 'nothing is delivered inside `on`');
  await tick();
  assert.deepEqual(calls, ['data a', 'data b', 'forward after a', 'forward after b', 'end']);
});

test('a read while flowing is delivered at once; the end comes after the work its data queued', async () => {
  const { b, calls } = body();
  b.on('data', (c) => {
    calls.push(`data ${c}`);
    process.nextTick(() => calls.push(`forward ${c}`));
  });
  b.once('end', () => calls.push('end'));
  b.push(Buffer.from('x'));
  assert.deepEqual(calls, ['data x']);
  b.end();
  await tick();
  assert.deepEqual(calls, ['data x', 'forward x', 'end']);
});

test('paused: reads wait and the upstream is asked to pause; resume delivers them and resumes the upstream', async () => {
  const { b, calls } = body();
  b.on('data', (c) => calls.push(`data ${c}`));
  b.once('error', (e) => calls.push(`error ${e.code}`));
  b.pause();
  assert.equal(b.push(Buffer.from('1')), false, 'false pauses undici');
  b.fail(Object.assign(new Error('idle'), { code: 'UND_ERR_BODY_TIMEOUT' }));
  await tick();
  assert.deepEqual(calls, [], 'nothing while paused');
  b.resume();
  await tick();
  assert.deepEqual(calls, ['resume-upstream', 'data 1', 'error UND_ERR_BODY_TIMEOUT'], 'the data before the error');
});

test('destroy aborts the call and nothing more is emitted', async () => {
  const { b, calls } = body();
  b.on('data', (c) => calls.push(`data ${c}`));
  b.once('end', () => calls.push('end'));
  b.push(Buffer.from('q'));
  b.destroy();
  assert.equal(b.push(Buffer.from('r')), false);
  b.end();
  await tick();
  assert.deepEqual(calls, ['data q', 'abort: the response was given up']);
});

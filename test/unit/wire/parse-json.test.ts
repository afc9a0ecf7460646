import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseResponseBody, parseResponseJson } from '../../../src/core/wire/index';
import { RECORDINGS, recording, sharedDir } from '../../helpers/shared';

const BODIES: string[] = [
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hé 世界 😀' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 4 },
  }),
  JSON.stringify({
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: 'hi' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 1 },
  }),
  JSON.stringify({ object: 'response', output: [{ type: 'message', content: [{ type: 'output_text', text: 'ok' }] }] }),
  JSON.stringify({ text: 'sglang', meta_info: { completion_tokens: 1, output_ids: [5] } }),
  JSON.stringify({ error: { message: 'rate limited', code: 429 } }),
  JSON.stringify([{ text: 'batch', meta_info: {} }]),
  JSON.stringify({ neither: 'this nor that' }),
  '  {"object":"chat.completion","choices":[]}  ',
];

test('a parsed JSON body reads exactly as its bytes do (recordings and every protocol)', (t) => {
  if (!sharedDir()) return t.skip('the shared recordings are absent (../shared or TOKENSCOPE_SHARED)');
  const bodies = [...BODIES];
  for (const name of RECORDINGS) {
    const r = recording(name);
    if (r?.files['response.json']) bodies.push(r.files['response.json']);
  }
  assert.ok(bodies.length > BODIES.length, 'shared recordings found');
  for (const text of bodies) {
    const want = parseResponseBody(new TextEncoder().encode(text));
    assert.deepEqual(parseResponseJson(text, JSON.parse(text)), want, text.slice(0, 80));
    assert.deepEqual(
      parseResponseJson(text, JSON.parse(text), { path: '/v1/messages' }),
      parseResponseBody(text, { path: '/v1/messages' }),
      text.slice(0, 80),
    );
  }
});

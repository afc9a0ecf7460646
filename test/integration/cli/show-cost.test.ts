// `show` prints an upstream's `usage.cost` as people read it, not as the float it arrived as.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';
import { rawRequest, startRig, startUpstream, waitFor } from '../../unit/proxy/local-upstream';

test('show prints the cost with three significant digits', async () => {
  const body = JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: 'moonshotai/kimi-k2-0905',
    provider: 'Chutes',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 120, completion_tokens: 3, total_tokens: 123, cost: 0.00010229999999999999 },
  });
  const up = await startUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const rig = await startRig({ default: up.url });
  try {
    const res = await rawRequest(`${rig.proxy.url}/v1/chat/completions`, {
      body: JSON.stringify({ model: 'moonshotai/kimi-k2-0905', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(res.status, 200);
    await waitFor(() => rig.store.list()[0]?.summary !== undefined, 'the analysed capture');
    const id = rig.store.list()[0].id;
    await rig.proxy.close();
    await rig.store.close();
    let out = '';
    const io: CliIO = { out: (t) => (out += t.endsWith('\n') ? t : t + '\n'), err: () => undefined, colour: false };
    assert.equal(await main(['show', id, '--data-dir', rig.dataDir], io), 0);
    assert.match(out, /^usage +120 prompt, 3 completion, \$0\.000102$/m);
    assert.doesNotMatch(out, /0\.0001022999/);
  } finally {
    await rig.close();
    await up.close();
  }
});

// The token view's data path on a large stream: the host posts the response without its wire events (only their
// count), the worker sends the tokens back as typed-array columns, and the view built from them is the one built
// from token objects.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyze } from '../../../src/core/analyze';
import type { RawEvent } from '../../../src/core/model';
import { streamOf } from '../../../src/core/tokens/table';
import { parseResponseBody } from '../../../src/core/wire/index';
import { tokenStreamView } from '../../../src/extension/exchangeView';
import { bigStreamEvents } from '../../helpers/big-stream';
import { shippedTokenWorker, kimiTokenizerDir } from './helpers';

const found = kimiTokenizerDir();

describe('token worker: columns on a large stream', { skip: 'skip' in found ? found.skip : false }, () => {
  const dir = 'dir' in found ? found.dir : '';
  const { worker } = shippedTokenWorker('tokenscope-worker-table-');

  test('a 4 MB stream: no events posted, typed columns back, the same view as from token objects', async () => {
    const response = parseResponseBody([...bigStreamEvents(4e6)].join(''));
    assert.ok(response.events.length > 5000, `${response.events.length} events`);
    const analysis = analyze({ response });
    // An event that cannot be cloned: posting the events would fail the job.
    const events: RawEvent[] = [...response.events, { data: '', comment: true, offset: 0, clone: () => 0 } as RawEvent];
    const { table } = await worker.tokenTable({ tokenizerDir: dir }, { response: { ...response, events }, analysis });
    assert.ok(table.columns.ids instanceof Uint32Array && table.columns.length > 20_000, `${table.columns.length} tokens`);
    assert.ok(table.findings.some((f) => f.finding.rule === 'markup-in-content'));
    const { stream } = await worker.tokenStream({ tokenizerDir: dir }, { response, analysis });
    assert.deepEqual(streamOf(table), stream);
    assert.deepEqual(tokenStreamView(table), tokenStreamView(stream));
  });
});

// How a WebSocket connection's messages become exchanges (src/core/proxy/ws-capture.ts): one per response.create, the
// server's events as their SSE stream, control frames kept only inside a response, and how each exchange ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ExchangeAnnotations, ExchangeWriter } from '../../../src/core/capture/store';
import { WsCapture } from '../../../src/core/proxy/ws-capture';
import type { WsMessage } from '../../../src/core/proxy/ws-frames';

interface Fake {
  index: number;
  request: string | undefined;
  body: string;
  responded: boolean;
  ended: boolean;
  outcome?: { error?: string; incomplete?: boolean };
  notes: ExchangeAnnotations[];
}

function rig() {
  const made: Fake[] = [];
  const capture = new WsCapture({
    begin(index, requestBody) {
      const f: Fake = { index, request: requestBody?.toString(), body: '', responded: false, ended: false, notes: [] };
      made.push(f);
      const w: Partial<ExchangeWriter> = {
        chunk: (b) => void (assert.ok(f.responded, 'the start is recorded before the first bytes'), (f.body += Buffer.from(b).toString())),
        annotate: (a) => void f.notes.push(a),
        ended: () => void (f.ended = true),
        finish: async (o) => ((f.outcome = o ?? {}), {} as never),
      };
      return w as ExchangeWriter;
    },
    respond: (w) => void (made.find((f) => !f.responded)!.responded = true),
    finished: () => undefined,
  });
  return { capture, made };
}

const text = (v: unknown): WsMessage => ({ kind: 'text', data: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)) });
const ctl = (kind: 'ping' | 'pong' | 'close', data = ''): WsMessage => ({ kind, data: Buffer.from(data) });

test('each response.create is one exchange; its events are stored as SSE; control frames count only inside a response', () => {
  const { capture, made } = rig();
  capture.fromServer(ctl('ping'));
  capture.fromClient(text({ type: 'response.create', model: 'm', input: 'a' }));
  capture.fromServer(text({ type: 'response.created', response: { id: 'r1' } }));
  capture.fromClient(ctl('pong', 'x'));
  capture.fromServer(text('{"type":"response.output_text.delta",\n"delta":"hi"}'));
  capture.fromServer(text({ type: 'response.completed', response: { id: 'r1' } }));
  capture.fromClient(ctl('ping'));
  capture.fromClient(text({ type: 'response.create', model: 'm', input: 'b' }));
  capture.fromServer(text({ type: 'response.created', response: { id: 'r2' } }));
  capture.closed('the client closed the connection before the response ended');
  assert.equal(made.length, 2);
  assert.equal(made[0].request, '{"type":"response.create","model":"m","input":"a"}');
  assert.equal(
    made[0].body,
    'event: response.created\ndata: {"type":"response.created","response":{"id":"r1"}}\n\n' +
      ': client pong (1 bytes)\n\n' +
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",\ndata: "delta":"hi"}\n\n' +
      'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r1"}}\n\n',
  );
  assert.deepEqual(made[0].outcome, {});
  assert.equal(made[0].ended, true);
  assert.equal(made[1].index, 2);
  assert.deepEqual(made[1].outcome, { incomplete: true, error: 'the client closed the connection before the response ended' });
});

test('a response.create before the previous response ended finishes it as incomplete; a stray message opens its own exchange', () => {
  const { capture, made } = rig();
  capture.fromServer(text({ type: 'session.created' }));
  capture.fromClient(text({ type: 'response.create' }));
  capture.fromServer(text({ type: 'response.created' }));
  capture.fromClient(text({ type: 'response.create', input: 'again' }));
  capture.fromServer(text({ type: 'error', error: { message: 'bad' } }));
  capture.closed('the upstream closed the connection before the response ended');
  assert.equal(made.length, 3);
  assert.equal(made[0].request, undefined);
  assert.match(made[0].body, /^event: session.created\n/);
  assert.deepEqual(made[0].outcome, {}, 'messages outside a response are not a cut response');
  assert.match(made[1].outcome!.error!, /next response.create before this response ended/);
  assert.deepEqual(made[2].outcome, {}, 'an error event ends the response');
});

test('binary, cut and compressed messages are noted as SSE comments; a cut response.create is named, not kept', () => {
  const { capture, made } = rig();
  capture.fromClient({ kind: 'text', data: Buffer.from('{"type":"response.create","input":"xx'), cutFrom: 80 * 1024 * 1024 });
  capture.fromServer({ kind: 'binary', data: Buffer.from([1, 2, 3]) });
  capture.fromServer({ kind: 'text', data: Buffer.from([0xff]), compressed: true });
  capture.fromClient(text('hello\nthere'));
  capture.fromServer({ kind: 'close', data: Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('done')]) });
  capture.closed(undefined);
  assert.equal(made.length, 1);
  assert.equal(made[0].request, undefined);
  assert.equal(made[0].notes[0].requestNotKept?.bytes, 80 * 1024 * 1024);
  assert.equal(
    made[0].body,
    ': server binary message, 3 bytes\n\n: server compressed message, not decoded\n\n: client> hello\n: client> there\n\n: server close 1000 done\n\n',
  );
});

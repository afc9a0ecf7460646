/**
 * The Wire tab's pages, without `vscode`: the events [from, from + WIRE_SHOWN) of a finished exchange, read from its
 * body file a block at a time (core wire/range.ts) whenever the webview asks. Nothing is kept between requests, so
 * an open exchange holds one page of its events at most, whatever the stream's length. Never throws: an exchange
 * that is gone, still streaming or unreadable, and a page past the end, are answered with a state and one line.
 */
import { bodyHint } from '../core/analyze';
import type { CaptureStore } from '../core/capture/store';
import { WireRangeReader } from '../core/wire/range';
import { WIRE_SHOWN, type WireEventView, type WirePageView } from '../../webview/protocol';

/** Body bytes read between two turns of the event loop, so a 16 MB stream never holds the extension host up long. */
const BYTES_PER_TURN = 256 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export type PageSource = Pick<CaptureStore, 'get' | 'readResponseFrames'>;

export async function readWirePage(store: PageSource | undefined, id: string, from: number, size = WIRE_SHOWN): Promise<WirePageView> {
  const answer = (state: WirePageView['state'], message: string, eventCount?: number): WirePageView => ({
    state,
    from,
    events: [],
    message,
    ...(eventCount !== undefined && { eventCount }),
  });
  try {
    const exchange = store?.get(id);
    if (!store || !exchange) return answer('gone', `Exchange ${id} is no longer in the capture store.`);
    if (exchange.state === 'streaming') {
      return answer(
        'streaming',
        `The stream is still going: events past the first ${WIRE_SHOWN.toLocaleString('en-US')} can be paged once it has finished.`,
      );
    }
    if (!Number.isSafeInteger(from) || from < 0) return answer('out-of-range', `There is no event ${from}.`);
    const frames = store.readResponseFrames(id);
    if (!frames) return answer('gone', `Exchange ${id} is no longer in the capture store.`);
    const reader = new WireRangeReader(from, size, bodyHint(exchange));
    let read = 0;
    for (const f of frames) {
      if (reader.push(f.bytes, f.t)) break;
      if ((read += f.bytes.length) >= BYTES_PER_TURN) (read = 0), await nextTurn();
    }
    const range = reader.end();
    if (range.events.length === 0) {
      const total = range.total ?? 0;
      return answer(
        'out-of-range',
        total === 0
          ? 'This response has no events.'
          : `There is no event ${(from + 1).toLocaleString('en-US')}: the response has ${total.toLocaleString('en-US')} events.`,
        total,
      );
    }
    let prev = range.timeBefore;
    const events = range.events.map((e): WireEventView => {
      const gap = e.t !== undefined && prev !== undefined ? e.t - prev : undefined;
      if (e.t !== undefined) prev = e.t;
      return { t: e.t, gap, event: e.event, data: e.data, comment: e.comment };
    });
    return { state: 'ok', from, events, ...(range.total !== undefined && { eventCount: range.total }) };
  } catch (e) {
    return answer('unreadable', `The response body could not be read: ${String((e as Error)?.message ?? e).split('\n')[0]}`);
  }
}

import { resultFor } from '../../core/capture/analysis';
import { exchangeLine, findingLine, localTime } from '../../core/capture/describe';
import { defaultDataDir, openStore, type CaptureStore } from '../../core/capture/store';
import { inFlight, inFlightLine, QuietStreams } from '../../core/live/inflight';
import { repairSummary } from '../../core/repair/describe';
import { UserError, type CapturedExchange, type Finding } from '../../core/model';
import { MAX_COUNT, parseArgs } from '../args';
import type { CliIO, Command } from '../io';

const HELP = `usage: tokenscope tail [--broken] [-n N] [--interval S] [--quiet-after S] [--data-dir DIR]

Follows the capture store from another terminal while \`tokenscope serve\` (or VS Code) captures: one line per
finished exchange, with its error findings, as serve prints them. The last N finished exchanges first (default 10).
--broken shows only exchanges with an error finding, an HTTP error or a stream cut short. A stream silent for
--quiet-after seconds (default 10) gets an "in flight" line. The store is only read (every --interval seconds,
default 1); Ctrl+C stops.`;

/** Network text (model ids, provider names, finding messages) for a terminal: control characters escaped. */
function safe(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\ufdd0-\ufdef]/g, (c) =>
    c === '\n' ? ' ' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

interface Shown {
  x: CapturedExchange;
  findings: Finding[];
}

/** An exchange as tail shows it: its line (summary from the analysis when the store has none yet) and its findings. */
function describe(store: CaptureStore, x: CapturedExchange): Shown {
  if (x.status === undefined) return { x, findings: [] };
  const res = store.readResponse(x.id);
  const full = store.get(x.id) ?? x;
  if (!res) return { x, findings: [] };
  try {
    const a = resultFor(store, full, res.bytes, res.chunks);
    return { x: { ...x, summary: x.summary ?? a.summary }, findings: a.analysis.findings };
  } catch {
    return { x, findings: [] };
  }
}

function isBroken(s: Shown): boolean {
  return s.findings.some((f) => f.severity === 'error') || s.x.state !== 'complete' || (s.x.status ?? 0) >= 400;
}

export interface TailOptions {
  dataDir: string;
  broken: boolean;
  last: number;
  intervalMs: number;
  quietAfterMs: number;
  signal: AbortSignal;
  /** Called before each poll with its number (1, 2…): tests count polls with it. */
  onPoll?: (n: number) => void;
}

/** Waits `ms` or until `signal` aborts; its abort listener is removed either way, so polls never pile them up. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The loop behind `tokenscope tail`, for tests too: polls until `signal` aborts. */
export async function follow(io: CliIO, o: TailOptions): Promise<void> {
  const done = new Set<string>();
  const quiet = new QuietStreams(o.quietAfterMs);
  let first = true;
  const time = (ms: number) => localTime(ms).slice(11);
  let polls = 0;
  while (!o.signal.aborted) {
    o.onPoll?.(++polls);
    if (o.signal.aborted) break;
    let store: CaptureStore | undefined;
    try {
      store = await openStore(o.dataDir, {
        readOnly: true,
        analyze: false,
        onWarning: first ? (m) => io.err(`tokenscope: ${m}`) : undefined,
      });
      const finished = store
        .list()
        .filter((x) => x.state !== 'streaming' && !done.has(x.id))
        .reverse(); // oldest first
      const fresh = first ? finished.slice(Math.max(0, finished.length - o.last)) : finished;
      for (const x of first ? finished : []) done.add(x.id);
      for (const x of fresh) {
        done.add(x.id);
        const s = describe(store, x);
        if (o.broken && !isBroken(s)) continue;
        io.out(`${time(x.startedAt)}  ${safe(exchangeLine(s.x))}${s.x.status === undefined && s.x.error ? `  ${safe(s.x.error)}` : ''}`);
        for (const f of s.findings) if (f.severity === 'error') io.out(`    ${safe(findingLine(f))}`);
        if (s.x.repair) io.out(`    repaired: ${safe(repairSummary(s.x.repair))}`);
      }
      for (const f of quiet.due(inFlight(store, Date.now(), o.quietAfterMs))) io.out(`${time(Date.now())}  ${safe(inFlightLine(f))}`);
    } catch (e) {
      if (first) throw e;
      io.err(`tokenscope tail: ${(e as Error).message.split('\n')[0]}`);
    } finally {
      await store?.close();
    }
    first = false;
    await pause(o.intervalMs, o.signal);
  }
}

const tail: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['data-dir', 'n', 'interval', 'quiet-after'], booleans: ['broken'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  if (args.positional.length) throw new UserError(`unexpected argument ${JSON.stringify(args.positional[0])}; see --help`);
  const last = args.num('n', 10);
  if (!Number.isInteger(last) || last < 0 || last > MAX_COUNT)
    throw new UserError(`-n must be a whole number of exchanges from 0 to ${MAX_COUNT.toLocaleString('en-US')}`);
  const interval = args.num('interval', 1);
  if (!(interval >= 0.05 && interval <= 3600)) throw new UserError('--interval must be between 0.05 and 3600 seconds');
  const quiet = args.num('quiet-after', 10);
  if (!(quiet > 0)) throw new UserError('--quiet-after must be a number of seconds above 0');
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await follow(io, {
      dataDir: args.str('data-dir') ?? defaultDataDir(),
      broken: args.bool('broken'),
      last,
      intervalMs: interval * 1000,
      quietAfterMs: quiet * 1000,
      signal: ac.signal,
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
};
export default tail;

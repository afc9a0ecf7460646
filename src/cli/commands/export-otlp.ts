import { defaultDataDir } from '../../core/capture/store';
import { UserError } from '../../core/model';
import { parseArgs } from '../args';
import type { Command } from '../io';
import { openStoreWithCaptures } from '../store';
import { OTLP_BOOLEANS, OTLP_HELP, OTLP_VALUES, otlpFromArgs, otlpReport, otlpTarget } from '../otlp';

const HELP = `usage: tokenscope export-otlp [--since WHEN] [--until WHEN] [--broken] [--data-dir DIR] [--redact PATTERN]...
                              [--otlp-endpoint URL] [--otlp-protocol P] [--otlp-content]

Sends stored captures to an OpenTelemetry collector after the fact, one GenAI span per exchange, with each finding
as a tokenscope.finding event. WHEN is a duration back from now (30m, 6h, 7d) or a date (2026-11-30, or ISO time).
--broken sends only exchanges with error findings. Exit 1 when a span could not be delivered.

${OTLP_HELP}`;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30m`, `6h`, `7d` back from now, or a date / ISO time. */
export function parseWhen(value: string, flag: string, now = Date.now()): number {
  const rel = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(value.trim());
  if (rel) return now - Number(rel[1]) * UNITS[rel[2].toLowerCase()];
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new UserError(`${flag} expects a duration (30m, 6h, 7d) or a date (2026-11-30), got ${JSON.stringify(value)}`);
  return t;
}

const exportOtlp: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: ['data-dir', 'since', 'until', ...OTLP_VALUES],
    booleans: ['broken', ...OTLP_BOOLEANS],
    repeatable: ['redact'],
  });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  if (args.positional.length) throw new UserError(`unexpected argument ${JSON.stringify(args.positional[0])}; see --help`);
  const since = args.str('since') === undefined ? -Infinity : parseWhen(args.str('since')!, '--since');
  const until = args.str('until') === undefined ? Infinity : parseWhen(args.str('until')!, '--until');
  const otlp = otlpFromArgs(args, io);
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const store = await openStoreWithCaptures(dataDir, io, 'to export').catch(async (e) => {
    await otlp.shutdown();
    throw e;
  });
  try {
    const picked = store
      .list()
      .filter((x) => x.state !== 'streaming' && x.startedAt >= since && x.startedAt <= until)
      .filter((x) => !args.bool('broken') || (x.summary?.counts.error ?? 0) > 0)
      .reverse(); // oldest first, as they happened
    if (picked.length === 0) {
      io.out(`no finished captures${args.str('since') ? ` since ${args.str('since')}` : ''} in ${dataDir}`);
      return 0;
    }
    io.err(`sending ${picked.length} capture${picked.length === 1 ? '' : 's'} to ${otlpTarget(otlp)}`);
    for (const [i, x] of picked.entries()) {
      otlp.exportCapture(store, x.id);
      // After the fact nothing is in a hurry: wait for each batch rather than overflow the queue.
      if (i % 256 === 255) await otlp.flush();
    }
    await otlp.shutdown();
    const s = otlp.stats();
    io.out(otlpReport(s));
    return s.dropped > 0 || s.pending > 0 ? 1 : 0;
  } finally {
    await otlp.shutdown();
    await store.close();
  }
};
export default exportOtlp;

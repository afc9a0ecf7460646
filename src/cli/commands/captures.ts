import { defaultDataDir, type ExchangeQuery } from '../../core/capture/store';
import { parseWhen } from '../../core/capture/when';
import { exchangeLine, localTime } from '../../core/capture/describe';
import { parseArgs } from '../args';
import type { Command } from '../io';
import { openStoreForReading, openStoreForWriting } from '../store';
import { UserError } from '../../core/model';
import { safeLine } from '../terminal';

const HELP = `usage: tokenscope captures [--data-dir DIR] [--broken] [--model M] [--provider P] [--rule R] [--agent A]
                           [--session S] [--since T] [--until T] [--limit N] [--json]
       tokenscope captures --prune [--data-dir DIR] [--max-age-days N] [--max-size-mb N]

Lists captured exchanges, newest first: id, time, agent, model via served provider, status, finish reason, findings,
and "repaired" when repair mode changed what the agent got (\`show ID\` says how).
Filters (all must hold): --broken (an error finding, an error or cut-short exchange, or an HTTP error), --model,
--provider (the served one), --rule (a finding's rule id), --agent, --session; --since/--until take a duration back
from now (30m, 1h, 2d) or a date (2026-12-01, 2026-12-01T10:00). --json prints the stored records (without bodies).

--prune removes every capture past the retention limits (default: older than 30 days, or beyond 2048 MB, oldest
first), judged by the captures' own times. A proxy removes at most a tenth of the captures it finds at one start by
itself and says what it held back; --prune is how you remove the rest.`;

const captures: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: ['data-dir', 'limit', 'model', 'provider', 'rule', 'agent', 'session', 'since', 'until', 'max-age-days', 'max-size-mb'],
    booleans: ['json', 'broken', 'prune'],
  });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  if (args.bool('prune')) return prune(args, dataDir, io);
  for (const flag of ['max-age-days', 'max-size-mb']) if (args.str(flag) !== undefined) throw new UserError(`--${flag} goes with --prune`);
  const limit = args.str('limit') === undefined ? undefined : args.positiveInt('limit', 1);
  const when = (flag: string) => {
    const v = args.str(flag);
    return v === undefined ? undefined : parseWhen(v, `--${flag}`);
  };
  const query: ExchangeQuery = {
    ...(args.bool('broken') && { broken: true }),
    model: args.str('model'),
    provider: args.str('provider'),
    rule: args.str('rule'),
    agent: args.str('agent'),
    session: args.str('session'),
    since: when('since'),
    until: when('until'),
    limit,
  };
  // Listing never analyses: summaries already stored are shown, the rest say "not analysed".
  const store = await openStoreForReading(dataDir, io);
  if (!store) {
    io.out(args.bool('json') ? '[]' : `no captures in ${dataDir}`);
    return 0;
  }
  try {
    // An indexed query: only the matching rows are read, newest first.
    const list = store.query(query);
    if (args.bool('json')) io.out(JSON.stringify(list, null, 2));
    else if (list.length === 0)
      io.out(Object.entries(query).some(([k, v]) => k !== 'limit' && v !== undefined) ? 'no captures match' : `no captures in ${dataDir}`);
    else for (const x of list) io.out(`${localTime(x.startedAt)}  ${safeLine(exchangeLine(x))}${x.repair ? '  repaired' : ''}`);
  } finally {
    await store.close();
  }
  return 0;
};
/** `captures --prune`: what retention held back, removed with the user's consent. */
async function prune(args: ReturnType<typeof parseArgs>, dataDir: string, io: Parameters<Command>[1]): Promise<number> {
  const limit = (flag: string) => {
    if (args.str(flag) === undefined) return undefined;
    const n = args.num(flag, 0);
    if (!(n > 0)) throw new UserError(`--${flag} must be a number above 0, got ${args.str(flag)}`);
    return n;
  };
  const maxAgeDays = limit('max-age-days');
  const maxMb = limit('max-size-mb');
  // Opened as a reader first: a missing or mistyped --data-dir is said, never created.
  const reader = await openStoreForReading(dataDir, io);
  if (!reader) {
    io.out(`no captures in ${dataDir}`);
    return 0;
  }
  await reader.close();
  // Opening runs retention's own pass first (its share): what it removed counts too; its other lines say nothing new.
  let atOpen = 0;
  const onWarning = (m: string) => {
    const removed = /^retention removed (\d+) /.exec(m);
    if (removed) atOpen += Number(removed[1]);
    else if (!m.startsWith('retention')) io.err(`tokenscope: ${safeLine(m)}`);
  };
  const store = await openStoreForWriting(dataDir, io, {
    analyze: false,
    spareFiles: 0,
    retention: { maxAgeDays, maxBytes: maxMb === undefined ? undefined : Math.round(maxMb * 1024 * 1024) },
    onWarning,
  });
  try {
    const n = (await store.prune()).removed + atOpen;
    io.out(n === 0 ? `nothing to remove in ${dataDir}` : `removed ${n} capture${n === 1 ? '' : 's'} from ${dataDir}`);
  } finally {
    await store.close();
  }
  return 0;
}

export default captures;

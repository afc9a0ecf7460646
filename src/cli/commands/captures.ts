import { defaultDataDir, type ExchangeQuery } from '../../core/capture/store';
import { parseWhen } from '../../core/capture/when';
import { exchangeLine, localTime } from '../../core/capture/describe';
import { parseArgs } from '../args';
import type { Command } from '../io';
import { openStoreForReading } from '../store';
import { safeLine } from '../terminal';

const HELP = `usage: tokenscope captures [--data-dir DIR] [--broken] [--model M] [--provider P] [--rule R] [--agent A]
                           [--session S] [--since T] [--until T] [--limit N] [--json]

Lists captured exchanges, newest first: id, time, agent, model via served provider, status, finish reason, findings.
Filters (all must hold): --broken (an error finding, an error or cut-short exchange, or an HTTP error), --model,
--provider (the served one), --rule (a finding's rule id), --agent, --session; --since/--until take a duration back
from now (30m, 1h, 2d) or a date (2026-12-01, 2026-12-01T10:00). --json prints the stored records (without bodies).`;

const captures: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['data-dir', 'limit', 'model', 'provider', 'rule', 'agent', 'session', 'since', 'until'], booleans: ['json', 'broken'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const dataDir = args.str('data-dir') ?? defaultDataDir();
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
    else if (list.length === 0) io.out(Object.entries(query).some(([k, v]) => k !== 'limit' && v !== undefined) ? 'no captures match' : `no captures in ${dataDir}`);
    else for (const x of list) io.out(`${localTime(x.startedAt)}  ${safeLine(exchangeLine(x))}`);
  } finally {
    await store.close();
  }
  return 0;
};
export default captures;

import { defaultDataDir } from '../../core/capture/store';
import { exchangeLine, localTime } from '../../core/capture/describe';
import { parseArgs } from '../args';
import type { Command } from '../io';
import { openStoreForReading } from '../store';
import { safeLine } from '../terminal';

const HELP = `usage: tokenscope captures [--data-dir DIR] [--limit N] [--json]

Lists captured exchanges, newest first: id, time, agent, model via served provider, status, finish reason, findings.
--json prints the stored records (without bodies).`;

const captures: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['data-dir', 'limit'], booleans: ['json'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const limit = args.str('limit') === undefined ? Infinity : args.positiveInt('limit', 1);
  // Listing never analyses: summaries already stored are shown, the rest say "not analysed".
  const store = await openStoreForReading(dataDir, io);
  if (!store) {
    io.out(args.bool('json') ? '[]' : `no captures in ${dataDir}`);
    return 0;
  }
  try {
    const list = store.list().slice(0, limit);
    if (args.bool('json')) io.out(JSON.stringify(list, null, 2));
    else if (list.length === 0) io.out(`no captures in ${dataDir}`);
    else for (const x of list) io.out(`${localTime(x.startedAt)}  ${safeLine(exchangeLine(x))}`);
  } finally {
    await store.close();
  }
  return 0;
};
export default captures;

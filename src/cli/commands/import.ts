import { exchangeLine } from '../../core/capture/describe';
import { defaultDataDir } from '../../core/capture/store';
import { BUNDLE_EXTENSION, importCaptures, parseImport } from '../../core/export/index';
import { UserError } from '../../core/model';
import { plural } from '../../core/tokens/accounting';
import { parseArgs } from '../args';
import { readTextFile, type Command } from '../io';
import { openStoreForWriting } from '../store';
import { safeLine } from '../terminal';

const HELP = `usage: tokenscope import FILE.har|FILE${BUNDLE_EXTENSION} [--data-dir DIR]

Imports a repro bundle or a HAR (browser devtools, HTTP Toolkit, mitmproxy, Tokenscope) into the capture store,
keeping the recorded timing. HAR entries that are not model API calls are skipped. Secrets are redacted on the
way in. A file that cannot be used changes nothing.`;

const importCommand: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['data-dir'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const [file] = args.positional;
  if (!file) throw new UserError(`which file? \`tokenscope import FILE.har\` or \`tokenscope import FILE${BUNDLE_EXTENSION}\``);
  const text = readTextFile(file);
  // Validate everything before the store is even opened: an unusable file leaves it untouched.
  const parsed = parseImport(text, file);
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const store = await openStoreForWriting(dataDir, io);
  try {
    const imported = await importCaptures(store, parsed.captures);
    await store.idle();
    io.out(`imported ${plural(imported.length, 'exchange')} from ${file} into ${dataDir}:`);
    for (const x of imported) io.out(`  ${safeLine(exchangeLine(store.get(x.id) ?? x))}`);
    if (parsed.skipped.length > 0) {
      const reasons = [...new Set(parsed.skipped.map((s) => s.why))].join('; ');
      io.err(`skipped ${parsed.skipped.length} HAR entr${parsed.skipped.length === 1 ? 'y' : 'ies'} (${reasons})`);
    }
  } finally {
    await store.close();
  }
  return 0;
};
export default importCommand;

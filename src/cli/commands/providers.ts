import { defaultDataDir } from '../../core/capture/store';
import { localTime } from '../../core/capture/describe';
import { UserError } from '../../core/model';
import { scorecard, type ScorecardRow } from '../../core/providers/scorecard';
import { safe } from '../../core/repair/describe';
import { parseArgs } from '../args';
import type { Command } from '../io';
import { openStoreForReading } from '../store';
import { parseWhen } from './export-otlp';

const HELP = `usage: tokenscope providers [--model M] [--since WHEN] [--data-dir DIR] [--json]

The provider scorecard over your captures: per model and served provider, the tool-call turns seen (requests that
offered tools), the share that broke (an error finding), the rules that broke them most, the median time to first
token, when the pair was last seen, and the verdict of the last \`tokenscope compare\` run on that provider for that model
(clean, broken with its error rules, or failed: no sample answered), as compare stored it in the data dir.
SLUG is the provider's OpenRouter slug, what provider.only / ignore and a policy take, from OpenRouter's listings
as compare and export stored them; "?" marks one derived from the name (a guess). --json rows carry "slug" and
"slugKnown". --since takes a duration (30m, 6h, 7d) or a date.`;

function table(rows: ScorecardRow[]): string[] {
  const cells = rows.map((r) => [
    safe(r.model),
    safe(r.provider),
    r.slug ? `${safe(r.slug)}${r.slugKnown ? '' : '?'}` : '-',
    String(r.toolTurns),
    r.toolTurns ? `${Math.round(r.brokenShare * 100)}% (${r.brokenTurns})` : '-',
    r.topRules.map((t) => `${t.rule} ×${t.turns}`).join(', ') || '-',
    r.ttftMsP50 === undefined ? '-' : `${r.ttftMsP50} ms`,
    localTime(r.lastSeen),
    r.lastComparison
      ? `${r.lastComparison.verdict}${r.lastComparison.rules.length ? ` (${r.lastComparison.rules.join(', ')})` : ''} ×${r.lastComparison.samples} ${localTime(r.lastComparison.at)}`
      : '-',
  ]);
  const head = ['MODEL', 'PROVIDER', 'SLUG', 'TOOL TURNS', 'BROKEN', 'TOP RULES', 'TTFT p50', 'LAST SEEN', 'LAST COMPARISON'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((s, i) => (i === c.length - 1 ? s : s.padEnd(widths[i]))).join('  ');
  return [line(head), ...cells.map(line)];
}

const providers: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['data-dir', 'model', 'since'], booleans: ['json'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  if (args.positional.length) throw new UserError(`unexpected argument ${JSON.stringify(args.positional[0])}; see --help`);
  const since = args.str('since') === undefined ? undefined : parseWhen(args.str('since')!, '--since');
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const store = await openStoreForReading(dataDir, io);
  const rows = store ? scorecard(store, { model: args.str('model'), since }) : [];
  await store?.close();
  if (args.bool('json')) io.out(JSON.stringify(rows, null, 2));
  else if (rows.length === 0)
    io.out(
      `no captured exchanges${args.str('model') ? ` for ${safe(args.str('model')!)}` : ''}${args.str('since') ? ` since ${args.str('since')}` : ''} in ${dataDir}`,
    );
  else {
    for (const l of table(rows)) io.out(l);
    if (rows.some((r) => r.slug && !r.slugKnown))
      io.out(
        `? a slug derived from the provider's name: no OpenRouter listing read yet names it (\`tokenscope compare --list --model MODEL\` reads the model's)`,
      );
  }
  return 0;
};
export default providers;

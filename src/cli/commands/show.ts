import { resultFor } from '../../core/capture/analysis';
import { exchangeProvider, findingsText, localTime, outcomeText } from '../../core/capture/describe';
import { defaultDataDir, findCapture } from '../../core/capture/store';
import { UserError } from '../../core/model';
import { formatCost } from '../../core/cost';
import { plural } from '../../core/tokens/accounting';
import { maskedSummary } from '../../core/capture/masking';
import { repairCallLines, repairSummary } from '../../core/repair/describe';
import { callLines, findingJson, turnReport } from '../../core/parsed';
import { parseArgs } from '../args';
import { paletteOf, type Command } from '../io';
import { MAX_FIELD, MAX_TEXT, findingLine, safeLine } from '../terminal';
import { openStoreWithCaptures } from '../store';
import { ProviderDirectory } from '../../core/policy/slugs';
import { exchangePolicy } from '../../core/policy/describe';

const HELP = `usage: tokenscope show ID [--data-dir DIR] [--json]

Prints one captured exchange (ID or a unique prefix of it) with its findings and its parse (the calls, content
and reasoning a correct parser extracts, beside the provider's tool_calls), as the store analysed it. --json prints the
exchange and the same parse object as lint --json.`;

const show: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['data-dir'], booleans: ['json'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const [id] = args.positional;
  if (!id) throw new UserError('which capture? `tokenscope show ID` (`tokenscope captures` lists them)');
  const store = await openStoreWithCaptures(args.str('data-dir') ?? defaultDataDir(), io, `with id "${id}"`);
  try {
    const x = findCapture(store, id);
    const res = store.readResponse(x.id)!;
    const { analysis, summary, ctx } =
      x.status === undefined ? { analysis: undefined, summary: undefined, ctx: undefined } : resultFor(store, x, res.bytes, res.chunks);
    // The parse of the turn (calls, content, reasoning, the provider's calls), as `lint --json` prints it.
    const report = analysis && ctx ? turnReport(analysis, ctx) : undefined;
    const slugs = new ProviderDirectory(store.providerSlugs());
    // Whether the served provider honoured the policy: judged by slug when OpenRouter's listings gave it, else by name.
    const verdict = exchangePolicy(x, slugs);
    const policy = verdict && { honoured: verdict.honoured, slug: verdict.slug, byName: verdict.byName };
    if (args.bool('json')) {
      io.out(
        JSON.stringify(
          {
            exchange: { ...x, summary: summary ?? x.summary },
            ...(policy && { policy }),
            ...(report ?? {}),
            findings: report?.findings ?? analysis?.findings.map((f) => findingJson(f)) ?? [],
          },
          null,
          2,
        ),
      );
      return 0;
    }
    const s = summary ?? x.summary;
    const rows: [string, string | undefined][] = [
      ['id', `${x.id}  (session ${x.sessionId})`],
      [
        'time',
        `${localTime(x.startedAt)}${x.endedAt ? `, ${x.endedAt - x.startedAt} ms` : ''}${x.ttfbMs !== undefined ? `, first byte after ${Math.round(x.ttfbMs)} ms` : ''}`,
      ],
      ['agent', x.agent],
      ['request', `${x.method} ${x.path} → ${x.upstreamUrl}`],
      [
        'websocket',
        x.websocket &&
          `response ${x.websocket.response} of connection ${x.websocket.connection} (the request is its response.create message; the events are kept as their SSE stream)`,
      ],
      ['model', [s?.model ?? x.requestModel, s?.family && `(family ${s.family})`].filter(Boolean).join(' ') || undefined],
      ['provider', [exchangeProvider(x), x.generationId && `generation ${x.generationId}`].filter(Boolean).join(', ') || undefined],
      [
        'pin',
        x.pin && `${x.pin.requested.join(', ')}${x.pin.honoured === undefined ? '' : x.pin.honoured ? ' (honoured)' : ' (NOT honoured)'}`,
      ],
      [
        'response',
        `${outcomeText(x)}, ${plural(x.responseBytes ?? res.bytes.length, 'byte')} in ${plural(res.chunks.length, 'chunk')}${s?.streamed ? ' (streamed)' : ''}`,
      ],
      [
        'usage',
        s?.usage &&
          [
            s.usage.promptTokens !== undefined && `${s.usage.promptTokens} prompt`,
            s.usage.completionTokens !== undefined && `${s.usage.completionTokens} completion`,
            s.usage.cost !== undefined && formatCost(s.usage.cost),
          ]
            .filter(Boolean)
            .join(', '),
      ],
      ['policy', verdict?.summary],
      [
        'repaired',
        x.repair &&
          `${repairSummary(x.repair)}; the agent got the delivered bytes (${plural(store.readDelivered(x.id)?.length ?? 0, 'byte')}), findings are on the upstream's`,
      ],
      ['masked', x.masked && maskedSummary(x.masked)],
      ['waited', x.queuedMs !== undefined ? `${x.queuedMs} ms for a free connection to the upstream (all were in use)` : undefined],
      ['not kept', x.requestNotKept && `the request body (${plural(x.requestNotKept.bytes, 'byte')}): ${x.requestNotKept.why}`],
      ['error', x.error],
      ['findings', findingsText(s)],
    ];
    // Every value may come from the network (an upstream error body, a User-Agent): escaped, and cut when long.
    for (const [k, v] of rows) if (v) io.out(`${k.padEnd(9)} ${safeLine(v)}`);
    for (const line of x.repair ? repairCallLines(x.repair) : []) io.out(`  repair: ${safeLine(line)}`);
    const pal = paletteOf(io);
    for (const f of analysis?.findings ?? []) io.out(`  ${findingLine(f, pal)}`);
    if (report) for (const line of callLines(report)) io.out(safeLine(line, MAX_TEXT));
    if ([...rows.map(([, v]) => v ?? ''), ...(analysis?.findings ?? []).map((f) => f.message)].some((v) => v.length > MAX_FIELD)) {
      io.out(`(long values are cut; \`tokenscope show ${x.id} --json\` prints them whole)`);
    }
  } finally {
    await store.close();
  }
  return 0;
};
export default show;

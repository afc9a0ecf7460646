import { defaultDataDir } from '../../core/capture/store';
import {
  EXPORT_FORMATS,
  exportText,
  exportToFile,
  isExportFormat,
  k2vvSample,
  parseRedactPattern,
  prepareRepro,
  previewRedactions,
  readBundle,
  readCapture,
  replayPin,
  sessionCaptureIds,
  withReplaySlug,
  withTokens,
  BUNDLE_EXTENSION,
  type CaptureInput,
  type RedactionItem,
  type Repro,
} from '../../core/export/index';
import { plural } from '../../core/tokens/accounting';
import { loadTokenizer } from '../../core/tokens/resolve';
import { UserError } from '../../core/model';
import { OPENROUTER_KEY_ENV, OpenRouterClient, openRouterApiRoot } from '../../core/upstream/openrouter';
import { safeLine } from '../terminal';
import { parseArgs } from '../args';
import { readTextFile, type CliIO, type Command } from '../io';
import { keepSlugs, openStoreWithCaptures } from '../store';
import type { SlugCache, SlugEntry } from '../../core/policy/slugs';
import { VERSION } from '../../core/version';

const HELP = `usage: tokenscope export ID [--format FORMAT] [-o FILE] [--data-dir DIR] [--redact PATTERN]... [--session] [--preview]
                        [--tokenizer-dir DIR] [--openrouter-url URL] [--offline]
       tokenscope export FILE${BUNDLE_EXTENSION} --format FORMAT [-o FILE]

Exports a captured exchange (ID or a unique prefix) as:
  bundle     repro bundle (*${BUNDLE_EXTENSION}): request, raw response stream with timing, findings (default)
  markdown   GitHub issue body: environment, failing excerpt, expected vs actual, findings, how to reproduce
  curl       shell script replaying the request on the same provider pin (key from the environment)
  har        HAR 1.2, for browser devtools, HTTP Toolkit, mitmproxy (--session: the whole session)
  k2vv       one K2 Vendor Verifier samples.jsonl line (the command to run it goes to stderr)
  promptfoo  promptfoo config with is-valid-openai-tools-call and finish-reason assertions

Auth headers, cookies and key-shaped strings are always redacted. --redact adds patterns (repeatable):
home (absolute home paths), email, LABEL=REGEX, or REGEX. --preview lists what would be redacted and writes
nothing. Without -o the export is printed.

The bundle and the issue body include the token stream and token accounting when the model's tokenizer is at
hand: --tokenizer-dir, or one \`tokenscope tokens\` already downloaded into the data dir (export never downloads).

A replay of an OpenRouter exchange is pinned to the provider that served it, by its OpenRouter slug (a display
name such as NovitaAI is not a slug). When the data dir does not know that slug yet, export reads the model's
endpoint listing from OpenRouter (key from ${OPENROUTER_KEY_ENV}) and keeps it; without a key, with --offline, or
when OpenRouter cannot be reached, the slug is derived from the name and the export and stderr say it is a guess.`;

/** The repro with its token stream, when the tokenizer is available without the network. */
async function addTokens(r: Repro, dataDir: string, tokenizerDir: string | undefined, io: CliIO): Promise<Repro> {
  const family = r.analysis.analysis.family;
  const model = r.analysis.response.model ?? r.analysis.request?.model;
  if (!tokenizerDir && !model && !family) return r;
  try {
    const tokenizer = await loadTokenizer({ model, family, tokenizerDir, cacheDir: dataDir, offline: true });
    return withTokens(r, tokenizer);
  } catch (e) {
    if (tokenizerDir) throw e;
    io.err(`tokens: not included (${(e as Error).message.split('\n')[0]})`);
    return r;
  }
}

/** How long export waits for OpenRouter's listing before it falls back to a guessed slug. */
const LISTING_TIMEOUT_MS = 15_000;

/** The client that reads OpenRouter's listings, or why there is none. */
function openRouterListing(url: string | undefined, offline: boolean): { client?: OpenRouterClient; why?: string } {
  if (url) openRouterApiRoot(url); // a bad URL is the user's error, not a reason to guess
  if (offline) return { why: 'not read: --offline' };
  try {
    return { client: new OpenRouterClient({ baseUrl: url, retry: { maxRetries: 1 } }) };
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    return { why: `no ${OPENROUTER_KEY_ENV} to read OpenRouter's provider listing` };
  }
}

function printRedactions(io: CliIO, items: RedactionItem[]): void {
  if (items.length === 0) {
    io.err('redacted: nothing');
    return;
  }
  io.err(`redacted (${items.reduce((n, x) => n + x.count, 0)}):`);
  for (const x of items) io.err(`  ${x.label.padEnd(24)} ${x.where}${x.count > 1 ? ` ×${x.count}` : ''}  (${x.preview})`);
}

function readBundleFile(path: string): CaptureInput {
  const b = readBundle(readTextFile(path));
  return { exchange: b.exchange, responseBody: b.responseBody, chunks: b.chunks };
}

const exportCommand: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: ['format', 'o', 'output', 'data-dir', 'tokenizer-dir', 'openrouter-url'],
    repeatable: ['redact'],
    booleans: ['session', 'preview', 'offline'],
  });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const [source] = args.positional;
  if (!source) throw new UserError('which capture? `tokenscope export ID --format markdown` (`tokenscope captures` lists them)');
  const format = args.str('format') ?? 'bundle';
  if (!isExportFormat(format)) throw new UserError(`unknown --format "${format}" (one of: ${EXPORT_FORMATS.join(', ')})`);
  const patterns = args.list('redact').map(parseRedactPattern);
  const out = args.str('o') ?? args.str('output');

  const dataDir = args.str('data-dir') ?? defaultDataDir();
  let inputs: CaptureInput[];
  const learnt: SlugEntry[] = [];
  if (source.endsWith(BUNDLE_EXTENSION)) {
    if (args.bool('session')) throw new UserError('--session needs a capture id, not a bundle');
    inputs = [readBundleFile(source)];
  } else {
    const store = await openStoreWithCaptures(dataDir, io, `with id "${source}"`);
    try {
      const first = readCapture(store, source);
      if (args.bool('session')) {
        if (format !== 'har') throw new UserError('--session exports a whole session, which only --format har holds');
        inputs = sessionCaptureIds(store, first.exchange.id).map((id) => readCapture(store, id));
      } else inputs = [first];
      // Formats that pin a replay to the served provider need its real slug (HAR replays nothing; a preview writes nothing).
      if (format !== 'har' && !args.bool('preview')) {
        const listing = openRouterListing(args.str('openrouter-url'), args.bool('offline'));
        const signal = AbortSignal.timeout(LISTING_TIMEOUT_MS);
        // The store is open read-only: what the listings name is collected, then kept once the export is read.
        const cache: SlugCache = {
          providerSlugs: () => [...store.providerSlugs(), ...learnt],
          learnProviderSlugs: (e) => learnt.push(...e),
        };
        for (let i = 0; i < inputs.length; i++)
          inputs[i] = await withReplaySlug(inputs[i], cache, listing.client, { why: listing.why, signal });
      }
    } finally {
      await store.close();
    }
    if (learnt.length > 0) await keepSlugs(dataDir, learnt, io);
  }

  if (args.bool('preview')) {
    for (const input of inputs) {
      if (inputs.length > 1) io.out(`${input.exchange.id}:`);
      const items = previewRedactions(input, { patterns });
      if (items.length === 0) io.out('  nothing to redact');
      for (const x of items) io.out(`  ${x.label.padEnd(24)} ${x.where}${x.count > 1 ? ` ×${x.count}` : ''}  (${x.preview})`);
    }
    return 0;
  }

  let repros = inputs.map((input) => prepareRepro(input, { patterns, tokenscopeVersion: VERSION }));
  if (format === 'bundle' || format === 'markdown') {
    repros = await Promise.all(repros.map((r) => addTokens(r, dataDir, args.str('tokenizer-dir'), io)));
  }
  if (out) {
    const text = exportToFile(repros, format, out);
    io.err(
      `wrote ${out} (${plural(Buffer.byteLength(text), 'byte')}, ${format}${repros.length > 1 ? `, ${repros.length} exchanges` : ''})`,
    );
  } else {
    io.out(exportText(repros, format));
  }
  printRedactions(
    io,
    repros.flatMap((r) => r.redactions),
  );
  if (format !== 'har') {
    for (const r of repros) {
      const pin = replayPin(r);
      if (pin?.derivedFrom) {
        io.err(
          `provider pin: "${safeLine(pin.slug)}" is a guess, derived from the served provider's name "${safeLine(pin.derivedFrom)}" (${safeLine(pin.why ?? '')}); check it on the model's OpenRouter page: a wrong slug gets 404 "No allowed providers"`,
        );
      }
    }
  }
  if (format === 'k2vv') {
    const sample = k2vvSample(repros[0]);
    if (sample.dropped.length > 0) io.err(`left out (not Chat Completions parameters): ${sample.dropped.join(', ')}`);
    io.err(`run it with: ${sample.command}`);
  }
  return 0;
};
export default exportCommand;

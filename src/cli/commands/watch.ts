import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { defaultDataDir, type CaptureStore } from '../../core/capture/store';
import { localTime } from '../../core/capture/describe';
import { importCaptures, parseImport } from '../../core/export/index';
import { UserError } from '../../core/model';
import { OpenRouterClient } from '../../core/upstream/openrouter';
import { caseFromCapture, lastVerdict, runWatch, servedOf, targetOf } from '../../core/watch/check';
import { capturedChatRequest } from '../../core/upstream/rerun';
import { findCapture } from '../../core/capture/store';
import { ProviderDirectory, resolveSlug, type SlugEntry } from '../../core/policy/slugs';
import { openWatchList, type CheckResult, type Verdict, type WatchCase } from '../../core/watch/list';
import { parseArgs } from '../args';
import { interruptSignal, readTextFile, type CliIO, type Command } from '../io';
import { openStoreForWriting, openStoreWithCaptures } from '../store';

const HELP = `usage: tokenscope watch add ID|FILE.tokenscope.json [--target TARGET] [--openrouter-url URL] [--data-dir DIR]
       tokenscope watch list [--json] [--data-dir DIR]
       tokenscope watch run [CASE…] [--samples N] [--json] [--openrouter-url URL] [--data-dir DIR]
       tokenscope watch remove CASE [--data-dir DIR]

A regression watch over broken exchanges. "add" makes a case of a capture (or a repro bundle, imported first):
its request, its provider pin, the rules it broke. "run" sends each case's request again to its pinned provider,
N samples (default 1), each answer kept as a capture linked to the case's, and says per case:
  still broken         a sample broke one of the case's rules again
  broken differently   samples broke, but none of the case's rules
  fixed                no error in any of the N samples
Exit status of "run": 1 when a case is still (or differently) broken, 2 when a case could not be checked at all,
0 when every case is fixed — so it can run from cron or CI. The OpenRouter key comes from OPENROUTER_API_KEY.
TARGET (default: the capture's pin, else the provider that served it): openrouter:SLUG, openrouter, sglang[:URL].
A served provider is pinned by its OpenRouter slug: read from the model's endpoint listing when the data dir does not
know it (key from OPENROUTER_API_KEY); without one it is derived from the name, and "add" says it is a guess.`;

const WORDS: Record<Verdict, string> = {
  'still-broken': 'still broken',
  fixed: 'fixed',
  'broken-differently': 'broken differently',
  unchecked: 'not checked',
};

/** Network text (finding messages, upstream errors) for a terminal: control characters escaped. */
function safe(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\ufdd0-\ufdef]/g, (c) =>
    c === '\n' ? ' ' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

function caseLine(c: WatchCase): string {
  const v = lastVerdict(c);
  const when = [`first broken ${localTime(c.firstBrokenAt)}`, `last broken ${localTime(c.lastBrokenAt)}`];
  if (c.fixedSince !== undefined) when.push(`fixed since ${localTime(c.fixedSince)}`);
  return `${c.id}  ${c.model ?? '(no model)'} on ${c.target}  [${c.rules.join(', ')}]  ${v ? WORDS[v] : 'not checked yet'}  (${when.join(', ')})`;
}

function resultLine(c: WatchCase, r: CheckResult, previous: Verdict | undefined): string {
  const broke = r.samples.filter((s) => !s.ok || s.errorRules.length > 0);
  const rules = [...new Set(broke.flatMap((s) => s.errorRules))];
  const errors = [...new Set(broke.map((s) => s.error).filter(Boolean))];
  const detail =
    r.verdict === 'unchecked'
      ? safe(r.reason ?? 'no sample could be sent')
      : `${broke.length}/${r.samples.length} sample${r.samples.length === 1 ? '' : 's'} broke${rules.length ? `: ${rules.join(', ')}` : ''}${errors.length ? ` (${safe(errors[0]!)})` : ''}`;
  const change = previous && previous !== r.verdict ? `  (was ${WORDS[previous]})` : '';
  return `${c.id}  ${WORDS[r.verdict]}  ${c.model ?? ''} on ${c.target}: ${detail}${change}`;
}

/**
 * The OpenRouter slugs to pin a capture's served provider by: the store's, plus the model's endpoint listing when the
 * store does not name the provider (and a key is at hand). `guess`: why the slug stays derived from the name.
 */
async function servedSlugs(
  store: CaptureStore,
  id: string,
  openrouterUrl: string | undefined,
): Promise<{ slugs: ProviderDirectory; served?: string; guess?: string }> {
  const slugs = new ProviderDirectory(store.providerSlugs());
  const x = findCapture(store, id);
  const served = servedOf(x);
  if (!served || slugs.slugOf(served).known) return { slugs };
  let body: Record<string, unknown>;
  try {
    body = capturedChatRequest(store, x.id).body;
  } catch {
    return { slugs }; // caseFromCapture says why
  }
  // Only when the target is the served provider (no pin, no re-run target) is its slug needed.
  if (targetOf(x, body, slugs) !== `openrouter:${slugs.slugOf(served).slug}`) return { slugs };
  let client: OpenRouterClient | undefined;
  try {
    client = new OpenRouterClient({ baseUrl: openrouterUrl, retry: { maxRetries: 1 } });
  } catch (e) {
    if (!(e instanceof UserError) || openrouterUrl) throw e;
  }
  const learnt: SlugEntry[] = [];
  const cache = {
    providerSlugs: () => [...store.providerSlugs(), ...learnt],
    learnProviderSlugs: (e: readonly SlugEntry[]) => void learnt.push(...e),
  };
  const r = await resolveSlug(cache, client, x.summary?.model ?? x.requestModel, served, AbortSignal.timeout(15_000));
  slugs.learn(learnt);
  return { slugs, served, ...(!r.known && { guess: r.why }) };
}

async function add(file: string, target: string | undefined, dataDir: string, io: CliIO, openrouterUrl?: string): Promise<number> {
  const isBundle = file.endsWith('.json') && existsSync(file);
  let store: CaptureStore;
  let id = file;
  if (isBundle) {
    const parsed = parseImport(readTextFile(file), file);
    if (parsed.captures.length !== 1)
      throw new UserError(`${file} holds ${parsed.captures.length} exchanges; watch one repro bundle at a time`);
    store = await openStoreForWriting(dataDir, io, { analyze: false });
    id = (await importCaptures(store, parsed.captures))[0].id;
  } else {
    store = await openStoreWithCaptures(dataDir, io, `with id "${file}"`, { analyze: false });
  }
  try {
    const { slugs, served, guess } = target ? { slugs: undefined } : await servedSlugs(store, id, openrouterUrl);
    const c = openWatchList(dataDir).add(caseFromCapture(store, id, { target, source: isBundle ? basename(file) : 'capture', slugs }));
    io.out(`watching ${c.id}: ${c.model ?? 'capture ' + c.captureId} on ${c.target}, rules ${c.rules.join(', ')}`);
    if (served && guess && c.target === `openrouter:${slugs!.slugOf(served).slug}`) {
      io.err(
        `tokenscope watch: the slug in ${safe(c.target)} is a guess, derived from the served provider's name "${safe(served)}" (${safe(guess)}); if it is wrong, remove the case and add it with --target openrouter:SLUG`,
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}

async function run(
  ids: string[],
  samples: number,
  json: boolean,
  openrouterUrl: string | undefined,
  dataDir: string,
  io: CliIO,
): Promise<number> {
  const list = openWatchList(dataDir);
  if (list.list().length === 0) {
    io.out('no watched cases (`tokenscope watch add ID` adds one)');
    return 0;
  }
  const store = await openStoreForWriting(dataDir, io, { analyze: true });
  const openrouter = new OpenRouterClient({
    baseUrl: openrouterUrl,
    retry: { onRetry: (r) => io.err(`HTTP ${r.status}: retrying in ${Math.ceil(r.waitMs / 1000)} s`) },
  });
  const { signal, release } = interruptSignal();
  try {
    const results = await runWatch(list, {
      store,
      openrouter,
      samples,
      signal,
      ids,
      onResult: (c, r, previous) => {
        if (!json) io.out(resultLine(c, r, previous));
      },
    });
    await store.idle();
    if (json)
      io.out(
        JSON.stringify(
          results.map((x) => ({
            case: x.case.id,
            verdict: x.result.verdict,
            previous: x.previous ?? null,
            target: x.case.target,
            samples: x.result.samples,
            ...(x.result.reason && { reason: x.result.reason }),
          })),
          null,
          2,
        ),
      );
    const verdicts = results.map((x) => x.result.verdict);
    if (verdicts.some((v) => v === 'still-broken' || v === 'broken-differently')) return 1;
    return verdicts.includes('unchecked') || signal.aborted ? 2 : 0;
  } finally {
    release();
    await store.close();
  }
}

const watch: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['data-dir', 'target', 'samples', 'openrouter-url'], booleans: ['json'] });
  const [sub, ...rest] = args.positional;
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  if (!sub) throw new UserError('watch needs add, list, run or remove; see --help');
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  switch (sub) {
    case 'add':
      if (rest.length !== 1) throw new UserError('watch what? `tokenscope watch add ID` or `tokenscope watch add FILE.tokenscope.json`');
      return add(rest[0], args.str('target'), dataDir, io, args.str('openrouter-url'));
    case 'list': {
      const cases = openWatchList(dataDir, { readOnly: true }).list();
      if (args.bool('json')) io.out(JSON.stringify(cases, null, 2));
      else if (cases.length === 0) io.out('no watched cases (`tokenscope watch add ID` adds one)');
      else for (const c of cases) io.out(caseLine(c));
      return 0;
    }
    case 'run':
      return run(rest, args.positiveInt('samples', 1), args.bool('json'), args.str('openrouter-url'), dataDir, io);
    case 'remove':
      if (rest.length !== 1) throw new UserError('remove which case? `tokenscope watch remove w1`');
      if (!openWatchList(dataDir).remove(rest[0]))
        throw new UserError(`no watched case "${rest[0]}" (\`tokenscope watch list\` shows them)`);
      io.out(`no longer watching ${rest[0]}`);
      return 0;
    default:
      throw new UserError(`unknown watch command "${sub}": use add, list, run or remove`);
  }
};
export default watch;

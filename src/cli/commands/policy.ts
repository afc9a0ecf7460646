import { existsSync } from 'node:fs';
import { defaultDataDir } from '../../core/capture/store';
import { UserError } from '../../core/model';
import { baseModel, checkModelKey, checkSlug, policyKeyFor, type Policies, type ProviderPolicy } from '../../core/policy/policy';
import { policyFilePath, readStoredPolicies, updateStoredPolicies } from '../../core/policy/stored';
import { ProviderDirectory } from '../../core/policy/slugs';
import { parseArgs } from '../args';
import type { Command, CliIO } from '../io';
import { safeLine } from '../terminal';
import { openStoreForReading } from '../store';

const HELP = `usage: tokenscope policy set MODEL [--ignore SLUG,…] [--order SLUG,…] [--only SLUG,…] [--allow-fallbacks | --no-fallbacks]
       tokenscope policy list [--json]
       tokenscope policy rm MODEL
       (each with [--data-dir DIR])

Per-model OpenRouter provider preferences, kept in the data dir (DIR/policies.json) and applied by every proxy that
captures to it (\`tokenscope serve\`, the VS Code extension's) from its next request, without a restart; a stream
already in flight is not touched. They are added to (and merged with) the agent's own \`provider\` object on
OpenRouter routes: --ignore providers are never used for MODEL, --order ones are tried first, --only ones are the
only ones used; --no-fallbacks stops OpenRouter from going past them.
  set   replaces MODEL's stored policy with the one given (SLUGs comma-separated, or the flag repeated).
  list  prints the stored policies (--json: the object policies.json holds, the form \`serve --policy FILE\` reads).
  rm    removes MODEL's stored policy.
MODEL is an OpenRouter model id (moonshotai/kimi-k2-0905) or a prefix ending in * (moonshotai/*). A variant
(moonshotai/kimi-k2-0905:exacto, :nitro, :floor, :free, :thinking…) follows its base model's policy unless it has
its own. A SLUG is OpenRouter's provider slug (deepinfra, atlas-cloud, or a tag such as deepinfra/fp4), not its
display name: it is checked against OpenRouter's provider listings Tokenscope has stored (\`tokenscope compare\`
reads them), with a warning for one they do not name.
Captures go to --data-dir (default ${defaultDataDir()}, or TOKENSCOPE_DATA_DIR).`;

/** The slugs of a comma-separated, possibly repeated, list flag, each checked. */
function slugs(args: ReturnType<typeof parseArgs>, flag: string): string[] | undefined {
  const given = args.list(flag);
  if (given.length === 0) return undefined;
  const out: string[] = [];
  for (const v of given.flatMap((x) => x.split(','))) {
    if (v.trim() === '') throw new UserError(`--${flag} has an empty slug in ${JSON.stringify(given.join(','))}`);
    const s = checkSlug(v, `--${flag}`);
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** OpenRouter's provider listings stored in the data dir (empty when none was read, or there is no store). */
async function directory(dataDir: string, io: CliIO): Promise<ProviderDirectory> {
  if (!existsSync(dataDir)) return new ProviderDirectory();
  const store = await openStoreForReading(dataDir, io).catch(() => undefined);
  try {
    return new ProviderDirectory(store?.providerSlugs() ?? []);
  } finally {
    await store?.close();
  }
}

/** `ignore chutes (Chutes) · order fireworks · only – · no fallbacks`, with display names where a listing gave one. */
export function policyLine(p: ProviderPolicy, dir: ProviderDirectory): string {
  const names = (xs: string[]) =>
    xs.map((s) => (dir.nameOf(s) && dir.nameOf(s)!.toLowerCase() !== s ? `${s} (${dir.nameOf(s)})` : s)).join(', ');
  const parts = [
    p.ignore?.length && `ignore ${names(p.ignore)}`,
    p.order?.length && `order ${names(p.order)}`,
    p.only?.length && `only ${names(p.only)}`,
    p.allow_fallbacks === false ? 'no fallbacks' : p.allow_fallbacks === true ? 'fallbacks allowed' : undefined,
  ].filter((s): s is string => !!s);
  return parts.join(' · ') || 'no preferences';
}

/** The slugs of a policy no stored listing names: a warning each (`set`) or a note (`list`). */
function unlisted(p: ProviderPolicy, dir: ProviderDirectory): string[] {
  return [...new Set([...(p.ignore ?? []), ...(p.order ?? []), ...(p.only ?? [])])].filter((s) => !dir.knows(s));
}

function noListing(dataDir: string): string {
  return `the slugs could not be checked: no OpenRouter provider listing is stored in ${dataDir} yet (\`tokenscope compare --list --model MODEL\` reads one, with OPENROUTER_API_KEY set)`;
}

async function set(args: ReturnType<typeof parseArgs>, dataDir: string, io: CliIO): Promise<number> {
  const [, given, ...extra] = args.positional;
  if (given === undefined)
    throw new UserError('policy set needs a MODEL (an OpenRouter model id such as moonshotai/kimi-k2-0905); see --help');
  if (extra.length)
    throw new UserError(
      `unexpected argument ${JSON.stringify(extra[0])}: give several slugs comma-separated (--ignore a,b) or repeat the flag; see --help`,
    );
  const model = checkModelKey(given);
  if (args.bool('allow-fallbacks') && args.bool('no-fallbacks'))
    throw new UserError('--allow-fallbacks and --no-fallbacks contradict each other: give one');
  const policy: ProviderPolicy = {};
  for (const flag of ['ignore', 'order', 'only'] as const) {
    const list = slugs(args, flag);
    if (list) policy[flag] = list;
  }
  if (args.bool('allow-fallbacks')) policy.allow_fallbacks = true;
  if (args.bool('no-fallbacks')) policy.allow_fallbacks = false;
  if (Object.keys(policy).length === 0)
    throw new UserError(
      'policy set needs at least one of --ignore, --order, --only, --allow-fallbacks, --no-fallbacks (`tokenscope policy rm MODEL` removes a policy)',
    );
  const clash = policy.ignore?.find((s) => policy.order?.includes(s) || policy.only?.includes(s));
  if (clash) throw new UserError(`${clash} is both ignored and in --${policy.order?.includes(clash) ? 'order' : 'only'}: give it to one`);

  const dir = await directory(dataDir, io);
  const { before } = await updateStoredPolicies(dataDir, (current) => ({ ...current, [model]: policy }));
  io.out(
    `${safeLine(model)}: ${safeLine(policyLine(policy, dir))}${before[model] ? ` (was: ${safeLine(policyLine(before[model], dir))})` : ''}`,
  );
  io.out(`  stored in ${policyFilePath(dataDir)}; proxies capturing to ${dataDir} apply it from their next request on OpenRouter routes`);
  if (!model.endsWith('*') && baseModel(model) === model)
    io.out(`  its variants (${safeLine(model)}:exacto, :nitro, :free…) follow it unless they have their own`);
  else if (baseModel(model) !== model)
    io.out(`  a variant: requests for ${safeLine(model)} use this policy, not the one of ${safeLine(baseModel(model))}`);
  if (dir.size === 0) io.err(`tokenscope policy: warning: ${noListing(dataDir)}`);
  else
    for (const s of unlisted(policy, dir))
      io.err(
        `tokenscope policy: warning: ${safeLine(s)} is not a provider slug in OpenRouter's listings stored in ${dataDir}; it was set anyway (OpenRouter ignores a slug it does not know)`,
      );
  return 0;
}

async function list(args: ReturnType<typeof parseArgs>, dataDir: string, io: CliIO): Promise<number> {
  if (args.positional.length > 1) throw new UserError(`unexpected argument ${JSON.stringify(args.positional[1])}; see --help`);
  const policies = existsSync(dataDir) ? readStoredPolicies(dataDir) : {};
  if (args.bool('json')) {
    io.out(JSON.stringify(policies, null, 2));
    return 0;
  }
  const keys = Object.keys(policies).sort();
  if (keys.length === 0) {
    io.out(`no provider policy is stored in ${dataDir} (\`tokenscope policy set MODEL --ignore SLUG\` sets one)`);
    return 0;
  }
  const dir = await directory(dataDir, io);
  const width = Math.max(...keys.map((k) => k.length));
  for (const k of keys) {
    const bad = dir.size ? unlisted(policies[k], dir) : [];
    io.out(
      `${safeLine(k).padEnd(width)}  ${safeLine(policyLine(policies[k], dir))}${bad.length ? `  (not in OpenRouter's listings: ${safeLine(bad.join(', '))})` : ''}`,
    );
  }
  if (dir.size === 0) io.out(`(${noListing(dataDir)})`);
  return 0;
}

async function rm(args: ReturnType<typeof parseArgs>, dataDir: string, io: CliIO): Promise<number> {
  const [, given, ...extra] = args.positional;
  if (given === undefined) throw new UserError('policy rm needs a MODEL; `tokenscope policy list` prints the stored ones');
  if (extra.length) throw new UserError(`unexpected argument ${JSON.stringify(extra[0])}; see --help`);
  const model = given.trim();
  const missing = (current: Policies): UserError => {
    const keys = Object.keys(current).sort();
    const follows = policyKeyFor(current, model);
    const why = follows
      ? `: it follows the policy of ${follows}`
      : keys.length
        ? ` (stored: ${keys.join(', ')})`
        : ` (none is stored in ${dataDir})`;
    return new UserError(`no stored provider policy for ${JSON.stringify(model)}${why}`);
  };
  if (!existsSync(policyFilePath(dataDir))) throw missing({});
  const { before } = await updateStoredPolicies(dataDir, (current) => {
    if (!Object.hasOwn(current, model)) throw missing(current);
    const next = { ...current };
    delete next[model];
    return next;
  });
  io.out(
    `${safeLine(model)}: policy removed (was: ${safeLine(policyLine(before[model], new ProviderDirectory()))}); proxies capturing to ${dataDir} stop applying it from their next request`,
  );
  return 0;
}

const policy: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: ['data-dir'],
    repeatable: ['ignore', 'order', 'only'],
    booleans: ['allow-fallbacks', 'no-fallbacks', 'json'],
  });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const sub = args.positional[0];
  const setOnly = ['ignore', 'order', 'only', 'allow-fallbacks', 'no-fallbacks'].filter((f) => args.flags.has(f));
  if (sub !== 'set' && setOnly.length) throw new UserError(`--${setOnly[0]} belongs to \`policy set\`; see --help`);
  if (sub !== 'list' && args.bool('json')) throw new UserError('--json belongs to `policy list`; see --help');
  if (sub === 'set') return set(args, dataDir, io);
  if (sub === 'list') return list(args, dataDir, io);
  if (sub === 'rm') return rm(args, dataDir, io);
  throw new UserError(
    sub === undefined
      ? 'policy needs set, list or rm; see --help'
      : `unknown policy command ${JSON.stringify(sub)} (set, list or rm); see --help`,
  );
};
export default policy;

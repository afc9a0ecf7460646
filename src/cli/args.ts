import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util';
import { UserError } from '../core/model';

/** Parsed command line: flags (`--name value`, `--flag`) and positional arguments. */
export interface Args {
  positional: string[];
  flags: Map<string, string | true>;
  str(name: string): string | undefined;
  /** Every value of a repeatable flag, in order. */
  list(name: string): string[];
  num(name: string, fallback: number): number;
  /** A count flag (`--samples`, `--concurrency`): a whole number from 1 to `max` (default MAX_COUNT). */
  positiveInt(name: string, fallback: number, max?: number): number;
  bool(name: string): boolean;
}

/** The most any count flag may be (`--samples`, `--concurrency`, `--limit`), unless the command sets its own bound. */
export const MAX_COUNT = 1_000_000;

/**
 * Parses `argv` against the known flags with node:util `parseArgs` (strict). `booleans` lists flags that take no
 * value; one-letter names are short options (`-o FILE`). Unknown flags are a UserError (exit 2) so typos never
 * pass silently, and the messages are Tokenscope's own (`--model needs a value`, `did you mean --format?`).
 */
export function parseArgs(argv: string[], known: { values?: string[]; booleans?: string[]; repeatable?: string[] }): Args {
  const repeatable = new Set(known.repeatable ?? []);
  const values = new Set([...(known.values ?? []), ...repeatable]);
  const booleans = new Set([...(known.booleans ?? []), 'help']);
  const options: ParseArgsConfig['options'] = {};
  for (const name of values) options[name] = { type: 'string', multiple: repeatable.has(name), ...(name.length === 1 && { short: name }) };
  for (const name of booleans) options[name] = { type: 'boolean', ...(name === 'help' && { short: 'h' }) };
  const allKnown = [...values, ...booleans];

  // node:util takes `--limit -5` for a missing value; a value that merely starts with one dash is a value here.
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      args.push(...argv.slice(i));
      break;
    }
    const name = a.startsWith('--') ? a.slice(2) : a.length === 2 && a[0] === '-' ? a.slice(1) : undefined;
    const next = argv[i + 1];
    if (name !== undefined && values.has(name) && next !== undefined && next.startsWith('-') && !next.startsWith('--') && next !== '-h') {
      args.push(`--${name}=${next}`);
      i++;
    } else if (/^-[^-]{2,}/.test(a)) {
      throw unknownOption(a, allKnown); // `-json` is a typo of `--json`, never a bundle of one-letter flags
    } else args.push(a);
  }
  let parsed: ReturnType<typeof nodeParseArgs>;
  try {
    parsed = nodeParseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    throw parseError(e, allKnown);
  }
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  for (const [k, v] of Object.entries(parsed.values)) {
    if (v === undefined || v === false) continue;
    if (Array.isArray(v)) {
      lists.set(k, v.map(String));
      if (v.length > 0) flags.set(k, String(v[v.length - 1]));
    } else flags.set(k, v === true ? true : String(v));
  }
  const num = (n: string, fallback: number): number => {
    const v = flags.get(n);
    if (typeof v !== 'string') return fallback;
    const x = Number(v);
    if (v.trim() === '' || !Number.isFinite(x)) throw new UserError(`--${n} must be a number, got "${v}"`);
    return x;
  };
  return {
    positional: parsed.positionals,
    flags,
    str: (n) => {
      const v = flags.get(n);
      return typeof v === 'string' ? v : undefined;
    },
    num,
    positiveInt: (n, fallback, max = MAX_COUNT) => {
      const x = num(n, fallback);
      if (!Number.isInteger(x) || x < 1) throw new UserError(`--${n} must be a positive whole number`);
      if (x > max) throw new UserError(`--${n} must be at most ${max.toLocaleString('en-US')}, got ${flags.get(n)}`);
      return x;
    },
    list: (n) => lists.get(n) ?? [],
    bool: (n) => flags.get(n) === true,
  };
}

/** node:util's parse errors in Tokenscope's words. */
function parseError(e: unknown, known: string[]): Error {
  const err = e as { code?: string; message?: string };
  const opt = /Option '(-{1,2}[^' ]+)/.exec(err.message ?? '')?.[1] ?? /option '(-{1,2}[^']+)'/i.exec(err.message ?? '')?.[1];
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && opt) return unknownOption(opt, known);
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && opt) {
    if (/does not take an argument/.test(err.message ?? '')) return new UserError(`${opt} takes no value`);
    return new UserError(`${opt} needs a value`);
  }
  return new UserError(`${String(err.message ?? e).split('\n')[0]}; see --help`);
}

/** `unknown option --fromat (did you mean --format?)`: the nearest known flag within two edits, if any. */
function unknownOption(given: string, known: string[]): UserError {
  const bare = given.replace(/^-+/, '');
  const near = known
    .filter((k) => k.length > 1)
    .map((k) => ({ k, d: editDistance(bare, k) }))
    .filter((x) => x.d <= Math.min(2, Math.floor(x.k.length / 2)))
    .sort((a, b) => a.d - b.d)[0];
  return new UserError(`unknown option ${given}${near ? ` (did you mean --${near.k}?)` : ''}; see --help`);
}

/** Levenshtein distance, for flag suggestions only (short strings). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

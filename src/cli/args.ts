import { UserError } from '../core/model';

/** Parsed command line: flags (`--name value`, `--flag`) and positional arguments. */
export interface Args {
  positional: string[];
  flags: Map<string, string | true>;
  str(name: string): string | undefined;
  /** Every value of a repeatable flag, in order. */
  list(name: string): string[];
  num(name: string, fallback: number): number;
  /** A count flag (`--samples`, `--concurrency`): a whole number of at least 1. */
  positiveInt(name: string, fallback: number): number;
  bool(name: string): boolean;
}

/**
 * Parses `argv` against the known flags. `booleans` lists flags that take no value.
 * Unknown flags are a UserError (exit 2) so typos never pass silently.
 */
export function parseArgs(argv: string[], known: { values?: string[]; booleans?: string[]; repeatable?: string[] }): Args {
  const repeatable = new Set(known.repeatable ?? []);
  const lists = new Map<string, string[]>();
  const values = new Set([...(known.values ?? []), ...repeatable]);
  const booleans = new Set([...(known.booleans ?? []), 'help']);
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  let i = 0;
  /** The argument after option `name`, unless that one is another option: `--model --json FILE` is a missing value. */
  const takeValue = (name: string): string => {
    const v = argv[++i];
    if (v === undefined || (v.startsWith('--') && v.length > 2)) throw new UserError(`${name} needs a value`);
    return v;
  };
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      const inline = eq > 0 ? a.slice(eq + 1) : undefined;
      if (booleans.has(name)) {
        if (inline !== undefined) throw new UserError(`--${name} takes no value`);
        flags.set(name, true);
      } else if (values.has(name)) {
        const v = inline ?? takeValue(`--${name}`);
        flags.set(name, v);
        if (repeatable.has(name)) lists.set(name, [...(lists.get(name) ?? []), v]);
      } else {
        throw unknownOption(`--${name}`, [...values, ...booleans]);
      }
    } else if (a === '-h') {
      flags.set('help', true);
    } else if (a.startsWith('-') && a.length > 1) {
      // Short options are the one-letter value flags (`-o FILE`); anything else is a typo, never a file name.
      const name = a.slice(1);
      if (name.length !== 1 || !values.has(name)) throw unknownOption(a, [...values, ...booleans]);
      flags.set(name, takeValue(a));
    } else {
      positional.push(a);
    }
  }
  const num = (n: string, fallback: number): number => {
    const v = flags.get(n);
    if (typeof v !== 'string') return fallback;
    const x = Number(v);
    if (!Number.isFinite(x)) throw new UserError(`--${n} must be a number, got "${v}"`);
    return x;
  };
  return {
    positional,
    flags,
    str: (n) => {
      const v = flags.get(n);
      return typeof v === 'string' ? v : undefined;
    },
    num,
    positiveInt: (n, fallback) => {
      const x = num(n, fallback);
      if (!Number.isInteger(x) || x < 1) throw new UserError(`--${n} must be a positive whole number`);
      return x;
    },
    list: (n) => lists.get(n) ?? [],
    bool: (n) => flags.get(n) === true,
  };
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

import { UserError } from '../core/model';

/** Parsed command line: flags (`--name value`, `--flag`) and positional arguments. */
export interface Args {
  positional: string[];
  flags: Map<string, string | true>;
  str(name: string): string | undefined;
  /** Every value of a repeatable flag, in order. */
  list(name: string): string[];
  num(name: string, fallback: number): number;
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
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      if (booleans.has(name)) {
        flags.set(name, true);
      } else if (values.has(name)) {
        const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
        if (v === undefined) throw new UserError(`--${name} needs a value`);
        flags.set(name, v);
        if (repeatable.has(name)) lists.set(name, [...(lists.get(name) ?? []), v]);
      } else {
        throw new UserError(`unknown option --${name}`);
      }
    } else if (a.startsWith('-') && a.length === 2 && values.has(a.slice(1))) {
      const v = argv[++i];
      if (v === undefined) throw new UserError(`${a} needs a value`);
      flags.set(a.slice(1), v);
    } else {
      positional.push(a);
    }
  }
  return {
    positional,
    flags,
    str: (n) => {
      const v = flags.get(n);
      return typeof v === 'string' ? v : undefined;
    },
    num: (n, fallback) => {
      const v = flags.get(n);
      if (typeof v !== 'string') return fallback;
      const x = Number(v);
      if (!Number.isFinite(x)) throw new UserError(`--${n} must be a number, got "${v}"`);
      return x;
    },
    list: (n) => lists.get(n) ?? [],
    bool: (n) => flags.get(n) === true,
  };
}

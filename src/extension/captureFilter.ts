/**
 * The Captures tree's filter: the filters of `tokenscope captures`, typed as its flags
 * (`--broken --model M --provider P --rule R --agent A --session S --since 1h --until … --limit N`), run as the same
 * indexed store query. No `vscode` import: the tree (capturesTree.ts) and the commands (extension.ts) use it.
 */
import type { ExchangeQuery } from '../core/capture/database';
import { parseWhen } from '../core/capture/when';
import { UserError } from '../core/model';

const TEXT_FLAGS = ['model', 'provider', 'rule', 'agent', 'session'] as const;
const TIME_FLAGS = ['since', 'until'] as const;
type TextFlag = (typeof TEXT_FLAGS)[number];
type TimeFlag = (typeof TIME_FLAGS)[number];

/** A filter as the user typed it: relative times (`--since 1h`) are kept as text and resolved at each query. */
export interface CaptureFilter {
  broken?: boolean;
  text: Partial<Record<TextFlag, string>>;
  time: Partial<Record<TimeFlag, string>>;
  limit?: number;
}

export const FILTER_HELP = '--broken --model M --provider P --rule R --agent A --session S --since 1h --until 2026-12-01 --limit N';

/** Splits on spaces; "double" or 'single' quotes keep a value with spaces together. */
function words(input: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(input); m; m = re.exec(input)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** The filter in `input`, or undefined for an empty one; a UserError names the first problem. */
export function parseFilter(input: string, now = Date.now()): CaptureFilter | undefined {
  const f: CaptureFilter = { text: {}, time: {} };
  const ws = words(input);
  let any = false;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i];
    const m = /^--?([a-z]+)(?:=(.*))?$/.exec(w);
    if (!m) throw new UserError(`"${w}" is not a filter; use ${FILTER_HELP}`);
    const [, name, inline] = m;
    if (name === 'broken') {
      if (inline !== undefined) throw new UserError('--broken takes no value');
      f.broken = any = true;
      continue;
    }
    const known = (TEXT_FLAGS as readonly string[]).includes(name) || (TIME_FLAGS as readonly string[]).includes(name) || name === 'limit';
    if (!known) throw new UserError(`unknown filter --${name}; use ${FILTER_HELP}`);
    const value = inline ?? ws[++i];
    if (value === undefined || value === '' || (inline === undefined && value.startsWith('--')))
      throw new UserError(`--${name} needs a value`);
    if (name === 'limit') {
      if (!/^\d+$/.test(value) || Number(value) < 1) throw new UserError(`--limit expects a whole number of at least 1, got "${value}"`);
      f.limit = Number(value);
    } else if ((TIME_FLAGS as readonly string[]).includes(name)) {
      parseWhen(value, `--${name}`, now); // a clear error now, not at the next refresh
      f.time[name as TimeFlag] = value;
    } else f.text[name as TextFlag] = value;
    any = true;
  }
  return any ? f : undefined;
}

/** The store query for a filter at `now` (`--since 1h` moves with the clock). */
export function filterQuery(f: CaptureFilter, now = Date.now()): ExchangeQuery {
  return {
    ...(f.broken && { broken: true }),
    ...f.text,
    ...(f.time.since !== undefined && { since: parseWhen(f.time.since, '--since', now) }),
    ...(f.time.until !== undefined && { until: parseWhen(f.time.until, '--until', now) }),
    ...(f.limit !== undefined && { limit: f.limit }),
  };
}

function quoted(v: string): string {
  return /[\s"']/.test(v) ? (v.includes('"') ? `'${v}'` : `"${v}"`) : v;
}

/** The filter as flags again (what the input box shows when it opens: edit, don't retype). */
export function filterText(f: CaptureFilter | undefined): string {
  if (!f) return '';
  const parts: string[] = [];
  if (f.broken) parts.push('--broken');
  for (const k of TEXT_FLAGS) if (f.text[k] !== undefined) parts.push(`--${k} ${quoted(f.text[k]!)}`);
  for (const k of TIME_FLAGS) if (f.time[k] !== undefined) parts.push(`--${k} ${quoted(f.time[k]!)}`);
  if (f.limit !== undefined) parts.push(`--limit ${f.limit}`);
  return parts.join(' ');
}

/** A short line for the view's description: `broken · model kimi · since 1h`. */
export function filterDescription(f: CaptureFilter | undefined): string | undefined {
  if (!f) return undefined;
  const parts: string[] = [];
  if (f.broken) parts.push('broken');
  for (const k of TEXT_FLAGS) if (f.text[k] !== undefined) parts.push(`${k} ${f.text[k]}`);
  for (const k of TIME_FLAGS) if (f.time[k] !== undefined) parts.push(`${k} ${f.time[k]}`);
  if (f.limit !== undefined) parts.push(`newest ${f.limit}`);
  return parts.join(' · ');
}

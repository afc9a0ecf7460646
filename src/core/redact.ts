/**
 * The one redaction step. Everything that touches disk (captures, logs) or leaves the machine (exports)
 * passes through here: auth headers, cookies and key-shaped strings are replaced by labelled placeholders.
 */

export interface Redaction {
  /** What was found: `authorization-header`, `openrouter-key`, `user-pattern:email`… */
  label: string;
  /** Where: a header name, or `body`. */
  where: string;
  /** A short, safe preview of what is replaced (first 4 characters then …). */
  preview: string;
}

export interface RedactOptions {
  /** User-configured patterns (regex source strings or RegExp), each replaced by `[REDACTED:<label>]`. */
  patterns?: { label: string; pattern: string | RegExp }[];
  /** Collects what was redacted (for the export preview). */
  report?: Redaction[];
}

/** Header names whose value is always secret. */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'x-goog-api-key',
  'openai-api-key',
  'anthropic-api-key',
  'x-auth-token',
]);

/** Key-shaped strings, most specific first. `sk-` keys start a word: `risk-management-framework` is not a key. */
const KEY_PATTERNS: { label: string; re: RegExp }[] = [
  { label: 'openrouter-key', re: /(?<![A-Za-z0-9])sk-or-(?:v\d+-)?[A-Za-z0-9_-]{16,}/g },
  { label: 'anthropic-key', re: /(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{16,}/g },
  { label: 'openai-key', re: /(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g },
  { label: 'huggingface-token', re: /\bhf_[A-Za-z0-9]{20,}\b/g },
  { label: 'google-key', re: /\bAIza[0-9A-Za-z_-]{30,}\b/g },
  { label: 'github-token', re: /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}\b/g },
  { label: 'bearer-token', re: /\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{12,}/g },
];

export function placeholder(label: string): string {
  return `[REDACTED:${label}]`;
}

function preview(s: string): string {
  return s.length <= 4 ? '…' : `${s.slice(0, 4)}…`;
}

function compile(p: string | RegExp): RegExp {
  if (p instanceof RegExp) return new RegExp(p.source, p.flags.includes('g') ? p.flags : p.flags + 'g');
  return new RegExp(p, 'g');
}

/** Replaces key-shaped strings and user patterns in any text. */
export function redactText(text: string, opts: RedactOptions = {}, where = 'body'): string {
  let out = text;
  for (const { label, re } of KEY_PATTERNS) {
    re.lastIndex = 0;
    if (!re.test(out)) continue;
    re.lastIndex = 0;
    out = out.replace(re, (m) => {
      if (m.startsWith('[REDACTED:')) return m;
      opts.report?.push({ label, where, preview: preview(m) });
      return placeholder(label);
    });
  }
  for (const { label, pattern } of opts.patterns ?? []) {
    const re = compile(pattern);
    out = out.replace(re, (m) => {
      if (m.length === 0) return m;
      opts.report?.push({ label: `user-pattern:${label}`, where, preview: preview(m) });
      return placeholder(label);
    });
  }
  return out;
}

/** Redacts a header map: secret headers are replaced whole, every other value is scanned for key shapes. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>, opts: RedactOptions = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    const value = Array.isArray(v) ? v.join(', ') : String(v);
    const name = k.toLowerCase();
    if (SECRET_HEADERS.has(name)) {
      const label = `${name}-header`;
      // Already redacted (a stored capture on its way to an export): nothing new to report.
      if (value !== placeholder(label)) opts.report?.push({ label, where: k, preview: preview(value) });
      out[k] = placeholder(label);
    } else {
      out[k] = redactText(value, opts, k);
    }
  }
  return out;
}

/** True when text still holds something key-shaped (used by tests and as a last guard before writing exports). */
export function containsSecret(text: string): boolean {
  return KEY_PATTERNS.some(({ re }) => {
    re.lastIndex = 0;
    const hit = re.test(text);
    re.lastIndex = 0;
    return hit;
  });
}

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

/**
 * A header or query parameter whose name says it holds a credential: one of its words (split at `-`, `_`, `.`) is,
 * or ends in, key, token, secret, auth, session, password or credential (`x-amz-security-token`, `x-litellm-api-key`,
 * `x-portkey-api-key`, `apikey`, `access_token`, `x-session-id`). Plural counters (`x-ratelimit-remaining-tokens`)
 * are not credentials and stay readable.
 */
const SECRET_WORD = /(?:key|token|secret|auth|authorization|session|sessionid|password|passwd|credentials?|signature|sig)$/;

export function isSecretName(name: string): boolean {
  const n = name.toLowerCase();
  if (SECRET_HEADERS.has(n)) return true;
  return n.split(/[-_.]/).some((w) => w.length > 0 && (SECRET_WORD.test(w) || w.startsWith('auth')));
}

/**
 * Key-shaped strings, most specific first. `sk-` keys start a word: `risk-management-framework` is not a key.
 * A pattern's capture group, when it has one, is context before the secret: it is matched but never replaced.
 * Short prefixes (`fw_`, `gsk_`, `xai-`) also name ordinary identifiers (`fw_update_firmware`), so those
 * patterns ask for what random keys always have and identifiers rarely do: length, no `_` inside, a digit.
 */
const KEY_PATTERNS: { label: string; re: RegExp }[] = [
  { label: 'openrouter-key', re: /(?<![A-Za-z0-9])sk-or-(?:v\d+-)?[A-Za-z0-9_-]{16,}/g },
  { label: 'anthropic-admin-key', re: /(?<![A-Za-z0-9])sk-ant-admin\d*-[A-Za-z0-9_-]{16,}/g },
  { label: 'anthropic-key', re: /(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{16,}/g },
  { label: 'openai-key', re: /(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g },
  { label: 'huggingface-token', re: /\bhf_[A-Za-z0-9]{20,}\b/g },
  { label: 'google-key', re: /\bAIza[0-9A-Za-z_-]{30,}\b/g },
  { label: 'github-token', re: /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}\b/g },
  { label: 'aws-access-key-id', re: /\bA[KS]IA[A-Z0-9]{16}\b/g },
  { label: 'groq-key', re: /\bgsk_(?=[A-Za-z]*\d)[A-Za-z0-9]{20,}\b/g },
  { label: 'fireworks-key', re: /\bfw_(?=[A-Za-z]*\d)[A-Za-z0-9]{20,}\b/g },
  { label: 'xai-key', re: /\bxai-(?=[A-Za-z]*\d)[A-Za-z0-9]{32,}\b/g },
  { label: 'together-key', re: /\btgp_v1_[A-Za-z0-9_-]{20,}/g },
  { label: 'slack-token', re: /\bxox[abprs]-\d+-[A-Za-z0-9-]{10,}/g },
  { label: 'bearer-token', re: /\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{12,}/g },
  // The value of an `"api_key"` / `"apiKey"` JSON member (also inside a JSON string, quotes escaped), whatever
  // the provider: 16+ key characters with a digit. Placeholders (`YOUR_API_KEY_HERE`, `{env:OPENROUTER_API_KEY}`)
  // are left alone. The member name is the pattern's capture group, kept as is (a lookbehind would make the
  // scan of every body several times slower).
  { label: 'api-key-value', re: /("(?:x-)?api[_-]?key\\?"\s*:\s*\\?")(?=[^"\\]*\d)[A-Za-z0-9_.+/=~-]{16,}(?=\\?")/gi },
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
  // One cheap pass first (KEY_HINT): a 16 MB request body without a key-shaped start skips the pattern set.
  for (const { label, re } of KEY_HINT.test(text) ? KEY_PATTERNS : []) {
    re.lastIndex = 0;
    if (!re.test(out)) continue;
    re.lastIndex = 0;
    out = out.replace(re, (m, group: unknown) => {
      const kept = typeof group === 'string' ? group : '';
      const secret = m.slice(kept.length);
      if (secret.startsWith('[REDACTED:')) return m;
      opts.report?.push({ label, where, preview: preview(secret) });
      return kept + placeholder(label);
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
    if (isSecretName(name)) {
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

/**
 * Redacts a URL or a request path: the value of every query parameter whose name says credential (`?api_key=`,
 * `&token=`, `key=`) becomes `[REDACTED:query-<name>]`, and the rest is scanned for key shapes like any text.
 */
export function redactUrl(url: string, opts: RedactOptions = {}): string {
  const q = url.indexOf('?');
  if (q < 0) return redactText(url, opts, 'url');
  const hash = url.indexOf('#', q);
  const end = hash < 0 ? url.length : hash;
  const params = url
    .slice(q + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // keep it as it came
      }
      const value = pair.slice(eq + 1);
      if (!isSecretName(name) || value === '' || value.startsWith(encodeURIComponent('[REDACTED:'))) return pair;
      const label = `query-${name.toLowerCase().replace(/[^a-z0-9_-]/g, '')}`;
      opts.report?.push({ label, where: 'url', preview: preview(value) });
      return `${pair.slice(0, eq)}=${encodeURIComponent(placeholder(label))}`;
    })
    .join('&');
  return redactText(url.slice(0, q + 1) + params + url.slice(end), opts, 'url');
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

/** The key patterns as maskSecrets runs them (built once: it runs on every response chunk). */
const KEY_MASK_RULES = KEY_PATTERNS.map(({ label, re }) => ({ label, re, reported: label, context: true }));
/**
 * All key patterns in one, case-insensitive: it matches wherever any of them does (and a little more). Most chunks
 * hold no key, and this one scan rules them out in about half the time of testing each pattern.
 */
const ANY_KEY = new RegExp(KEY_PATTERNS.map(({ re }) => `(?:${re.source})`).join('|'), 'i');
/**
 * The literal start of every key pattern above, as one cheap pass (no lookarounds): text holding none of these
 * holds no key, and the full pattern set (ANY_KEY's lookbehinds make it several times slower) never runs on it.
 * This is the per-chunk scan on the proxy's forwarding path. Keep it in step with KEY_PATTERNS.
 */
const KEY_HINT = /sk-|hf_|aiza|gh[opsu]_|github_pat_|a[ks]ia|gsk_|fw_|xai-|tgp_v1_|xox[abprs]-|bearer|api[_-]?key/i;
/** The longest text KEY_HINT matches (`github_pat_`). */
const KEY_HINT_MAX = 11;

/**
 * False when `maskSecrets` (without user patterns) cannot change `before` followed by `bytes`, given whether `before`
 * alone holds a key hint: no hint in `bytes`, none across the seam. Looks at `bytes` and a few bytes of `before` only.
 */
export function mayMaskAcross(before: Uint8Array, beforeHinted: boolean, bytes: Uint8Array): boolean {
  if (beforeHinted || KEY_HINT.test(latin1(bytes))) return true;
  if (before.length === 0) return false;
  const edge = KEY_HINT_MAX - 1;
  return KEY_HINT.test(latin1(before.subarray(Math.max(0, before.length - edge))) + latin1(bytes.subarray(0, edge)));
}

/** Whether `bytes` hold a key hint (a key pattern can only match where one does). */
export function hasKeyHint(bytes: Uint8Array): boolean {
  return KEY_HINT.test(latin1(bytes));
}

function latin1(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

/**
 * Same-length redaction, for stored response bodies whose byte offsets and chunk timing must stay exact: every match
 * of the patterns `redactText` uses becomes `[REDACTED:<label>]`, padded with `*` or cut to the match's length.
 * Bytes are scanned one character per byte (latin1), so a text offset is a byte offset; key patterns match ASCII
 * only and a user pattern's match is widened to whole UTF-8 characters, so the ASCII mask keeps UTF-8, JSON and SSE
 * valid. Text keeps its length in UTF-16 units. Returns the input itself when nothing matched.
 */
export function maskSecrets<T extends string | Uint8Array>(input: T, opts: RedactOptions = {}, where = 'body'): T {
  const bytes = typeof input !== 'string';
  let text = bytes ? Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('latin1') : (input as string);
  // A UTF-8 continuation byte (10xxxxxx) cannot start or end a mask.
  const inside = (i: number) => bytes && i < text.length && (text.charCodeAt(i) & 0xc0) === 0x80;
  const keyRules = KEY_HINT.test(text) && ANY_KEY.test(text) ? KEY_MASK_RULES : [];
  const rules = opts.patterns?.length
    ? [...keyRules, ...opts.patterns.map(({ label, pattern }) => ({ label, re: compile(pattern), reported: `user-pattern:${label}`, context: false }))]
    : keyRules;
  let changed = false;
  for (const { label, re, reported, context } of rules) {
    // A chunk that may hold a key: one test per pattern finds the ones to run.
    re.lastIndex = 0;
    const hit = re.test(text);
    re.lastIndex = 0;
    if (!hit) continue;
    let out = '';
    let last = 0;
    for (const m of text.matchAll(re)) {
      // A key pattern's capture group is context before the secret (see KEY_PATTERNS): it stays.
      const at = m.index + (context ? (m[1]?.length ?? 0) : 0);
      if (m[0].length === 0 || text.startsWith('[REDACTED:', at)) continue;
      let start = Math.max(at, last);
      let end = m.index + m[0].length;
      while (start > last && inside(start)) start--;
      while (inside(end)) end++;
      if (end <= start) continue;
      opts.report?.push({ label: reported, where, preview: preview(text.slice(start, end)) });
      const p = placeholder(label);
      out += text.slice(last, start) + (end - start <= p.length ? p.slice(0, end - start) : p.padEnd(end - start, '*'));
      last = end;
    }
    if (last === 0) continue;
    text = out + text.slice(last);
    changed = true;
  }
  if (!changed) return input;
  return (bytes ? Buffer.from(text, 'latin1') : text) as T;
}

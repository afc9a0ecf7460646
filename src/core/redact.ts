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
 * What a body's secret-named field holds (its name's last word decides): stricter than `isSecretName`, since in a body
 * `token` (logprobs), `key` (tool arguments), `session_id`, `signature` (thinking blocks) or `prompt_cache_key` are
 * data, while `api_key`, `x-portkey-api-key`, `aws_session_token`, `client_secret`, `password`, `cookie`,
 * `set-cookie` and `authorization` are credentials wherever they are echoed.
 */
type FieldKind = 'key' | 'secret' | 'cookie' | 'authorization';

const KEY_QUALIFIERS = new Set([
  'api',
  'access',
  'secret',
  'private',
  'virtual',
  'session',
  'admin',
  'service',
  'master',
  'signing',
  'client',
  'auth',
  'subscription',
  'license',
  'encryption',
  'portkey',
]);
const TOKEN_QUALIFIERS = new Set([
  'access',
  'refresh',
  'id',
  'session',
  'security',
  'auth',
  'bearer',
  'api',
  'csrf',
  'xsrf',
  'oauth',
  'personal',
  'bot',
  'secret',
  'client',
  'app',
  'user',
]);
const ONE_WORD_KEYS = new Set([
  'apikey',
  'portkey',
  'secretkey',
  'accesskey',
  'privatekey',
  'accesstoken',
  'refreshtoken',
  'sessiontoken',
  'idtoken',
  'authtoken',
  'apitoken',
  'bearertoken',
]);

/** A name holding none of these cannot be secret-named (a quick test before splitting it into words). */
const FIELD_HINT = /key|token|secret|pass|cookie|auth|credential/i;

export function secretFieldKind(name: string): FieldKind | undefined {
  if (!FIELD_HINT.test(name)) return undefined;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .split(/[-_.\s]+/)
    .filter(Boolean);
  const last = words.at(-1);
  const before = words.at(-2) ?? '';
  if (last === undefined) return undefined;
  if (last === 'cookie' || last === 'cookies') return 'cookie';
  if (last === 'authorization') return 'authorization';
  if (['password', 'passwd', 'passphrase', 'secret', 'credential', 'credentials', 'auth'].includes(last)) return 'secret';
  if (ONE_WORD_KEYS.has(last)) return 'key';
  if (last === 'key' && KEY_QUALIFIERS.has(before)) return 'key';
  if (last === 'token' && TOKEN_QUALIFIERS.has(before)) return 'key';
  return undefined;
}

/** A value that only names where a credential goes (`YOUR_API_KEY`, `{env:X}`, `${X}`, `<key>`, `***`). */
const PLACEHOLDER_VALUE =
  /^(?:\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|\{env:[^}]*\}|\{\{[^}]*\}\}|<[^>]*>|\*+|x{3,}|\.{3}|…|null|none|true|false|undefined|[A-Z][A-Z0-9_]+)$/;

/** Whether `value` of a field of this kind looks like a credential (and not like a placeholder or prose). */
function credentialValue(kind: FieldKind, value: string): boolean {
  const v = value.trim();
  if (v === '' || v.includes('[REDACTED:') || masked(v) || PLACEHOLDER_VALUE.test(v)) return false;
  switch (kind) {
    case 'key':
      return /^[A-Za-z0-9_.+/=~:-]{16,}$/.test(v) && /\d/.test(v);
    case 'secret':
      return /^\S{4,}$/.test(v);
    case 'cookie':
      return v.length >= 3 && v.includes('=');
    case 'authorization':
      return /^[A-Za-z][\w.-]*\s+\S{4,}/.test(v) || /^\S{16,}$/.test(v);
  }
}

/** A same-length mask cut short (`[REDACTE`, `[REDACTED:secret-`): what an earlier pass left, no credential. */
function masked(v: string): boolean {
  return v.startsWith('[RE') && '[REDACTED:'.startsWith(v.slice(0, 10));
}

/** Accepts a field match: its name (group 2) is secret-named and its value (after group 1) looks like a credential. */
function secretField(groups: readonly (string | undefined)[]): boolean {
  const kind = secretFieldKind(groups[2] ?? '');
  return kind !== undefined && credentialValue(kind, groups[0]!.slice(groups[1]?.length ?? 0));
}

/**
 * The same for a `Name: value` line. Code has such lines too (`password: string;`, `secret: z.string(),`): a
 * password-like value there must hold a digit and no code punctuation.
 */
function secretLine(groups: readonly (string | undefined)[]): boolean {
  const kind = secretFieldKind(groups[2] ?? '');
  const value = groups[0]!.slice(groups[1]?.length ?? 0).trim();
  if (kind === 'secret' && !(/\d/.test(value) && /^[^\s()[\]{};,<>]{6,}$/.test(value))) return false;
  return kind !== undefined && credentialValue(kind, value);
}

/**
 * Key-shaped strings, most specific first. `sk-` keys start a word: `risk-management-framework` is not a key.
 * A pattern's capture group, when it has one, is context before the secret: it is matched but never replaced.
 * Short prefixes (`fw_`, `gsk_`, `xai-`) also name ordinary identifiers (`fw_update_firmware`), so those
 * patterns ask for what random keys always have and identifiers rarely do: length, no `_` inside, a digit.
 * A pattern with `accept` keeps only the matches it accepts (given the match and its groups).
 */
interface KeyPattern {
  label: string;
  re: RegExp;
  accept?: (groups: readonly (string | undefined)[]) => boolean;
}

const KEY_PATTERNS: KeyPattern[] = [
  { label: 'openrouter-key', re: /(?<![A-Za-z0-9])sk-or-(?:v\d+-)?[A-Za-z0-9_-]{16,}/g },
  { label: 'anthropic-admin-key', re: /(?<![A-Za-z0-9])sk-ant-admin\d*-[A-Za-z0-9_-]{16,}/g },
  { label: 'anthropic-key', re: /(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{16,}/g },
  { label: 'openai-key', re: /(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g },
  { label: 'huggingface-token', re: /\bhf_[A-Za-z0-9]{20,}\b/g },
  { label: 'google-key', re: /\bAIza[0-9A-Za-z_-]{30,}\b/g },
  { label: 'github-token', re: /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}\b/g },
  { label: 'aws-access-key-id', re: /\bA[KS]IA[A-Z0-9]{16}\b/g },
  // STS session tokens (base64 of a protobuf that starts the same way in every token AWS issues).
  { label: 'aws-session-token', re: /(?<![A-Za-z0-9+/])(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz|FQoGZXIvYXdz)[A-Za-z0-9+/=]{64,}/g },
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
  // Any other secret-named JSON member (`"x-portkey-api-key"`, `"aws_session_token"`, `"client_secret"`, `"cookie"`,
  // `"authorization"`), as a request's headers are: a body that echoes headers or credentials (an upstream's debug
  // echo, a tool's output) keeps them no more than the request does. A string value, or a list of them (`set-cookie`).
  { label: 'secret-field', re: /(\\?"([A-Za-z][\w.-]{0,63})\\?"\s*:\s*\\?")([^"\\\r\n]{1,8192})(?=\\?")/g, accept: secretField },
  {
    label: 'secret-field',
    re: /(\\?"([A-Za-z][\w.-]{0,63})\\?"\s*:\s*\[\s*\\?")((?:[^"\\\r\n\]]|\\?"\s*,\s*\\?"){1,8192})(?=\\?"\s*\])/g,
    accept: secretField,
  },
  // The same as a header line (`Authorization: Basic …`, `Cookie: …`, `> x-api-key: …` in a tool's curl output).
  {
    label: 'secret-field',
    re: /((?:^|[\r\n]|\\r|\\n)[ \t<>*]*([A-Za-z][\w-]{0,63})[ \t]*:[ \t]*)([^\r\n"\\]{1,8192})/g,
    accept: secretLine,
  },
  // An environment assignment (`AWS_SESSION_TOKEN=…`, `OPENAI_API_KEY="…"`).
  {
    label: 'secret-field',
    re: /((?<![a-z0-9])(?:API_KEY|SECRET_ACCESS_KEY|SECRET_KEY|SESSION_TOKEN|ACCESS_TOKEN|AUTH_TOKEN|REFRESH_TOKEN|SECRET|PASSWORD|PASSWD)[ \t]*=[ \t]*["']?)([^\s"'\\]{8,})/g,
    accept: (g) => !PLACEHOLDER_VALUE.test(g[2] ?? '') && !g[2]!.includes('[REDACTED:'),
  },
  // A URL's credentials: the value of a secret-named query parameter (`?key=`, `&api_key=`, `&X-Amz-Signature=`,
  // `?access_token=`, `&sig=`; `&` also JSON-escaped), and the userinfo (`https://user:pass@host`, a token as user).
  {
    label: 'url-credential',
    // Found from the end of the name (`key=`), the `?`/`&` before it checked after: a scan from every `?`, `&` and
    // letter was several times slower.
    re: /((?:key|token|secret|password|passwd|credentials?|signature|sig|auth|authorization|authentication)=)(?<=(?:[?&]|\\u0026)[A-Za-z0-9_.-]{0,64}=)(?!\[REDACTED|%5BREDACTED)([^&#\s"'<>\\]+)/gi,
  },
  {
    label: 'url-userinfo',
    // Found from its `://` (a scan from every word for a scheme made this the slowest pattern).
    re: /(:\/\/)(?<=[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/)(?!\[REDACTED|%5BREDACTED)([^\s/?#@"'<>\\]{1,256})(?=@)/g,
    accept: (g) => g[2]!.includes(':') || /^[\w.~+/=-]{16,}$/.test(g[2]!),
  },
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

/** The groups of a `String.replace` callback's arguments (match, then the groups; no named groups here). */
function replaceGroups(args: unknown[]): (string | undefined)[] {
  return args.slice(0, -2) as (string | undefined)[];
}

/** Replaces key-shaped strings and user patterns in any text. */
export function redactText(text: string, opts: RedactOptions = {}, where = 'body'): string {
  let out = text;
  // One cheap pass first (KEY_HINT): a 16 MB request body without a key-shaped start skips the pattern set.
  const hint = hinted(text);
  const escaped = hint ? unescapedKeyChars(text) : undefined;
  if (escaped) {
    // A key spelled with JSON escapes (`sk-or-v1-\u0061bc…`) is found in the unescaped text and cut out of this one.
    out = replaceSpans(text, keySpans(text, escaped), (span) => {
      opts.report?.push({ label: span.label, where, preview: preview(span.secret) });
      return placeholder(span.label);
    });
  } else {
    for (const { label, re, accept } of hint ? KEY_PATTERNS : []) {
      re.lastIndex = 0;
      if (!re.test(out)) continue;
      re.lastIndex = 0;
      out = out.replace(re, (m: string, ...rest: unknown[]) => {
        const group = rest[0];
        const kept = typeof group === 'string' ? group : '';
        const secret = m.slice(kept.length);
        if (secret.startsWith('[REDACTED:')) return m;
        if (accept && !accept(replaceGroups([m, ...rest]))) return m;
        opts.report?.push({ label, where, preview: preview(secret) });
        return kept + placeholder(label);
      });
    }
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

/**
 * JSON `\u00XX` escapes of the characters keys are made of (`\u0061` for `a`): a key written that way in a body is
 * the same key once the body is decoded (and `show --json` decodes it), so it is found in that spelling too.
 */
const ESCAPED_KEY_CHAR = /\\u00(?:2[bdef]|3[0-9d]|4[1-9a-f]|5[0-9af]|6[1-9a-f]|7[0-9ae])/i;

/** `text` with those escapes decoded, and where each of its characters starts in `text` (one more entry: the end). */
interface Unescaped {
  plain: string;
  at: Int32Array;
}

/** Whether text holds such an escape: found by `indexOf` (a regular expression stops at every escaped quote). */
function hasEscapedKeyChar(text: string): boolean {
  for (let i = text.indexOf('\\u00'); i >= 0; i = text.indexOf('\\u00', i + 1)) {
    // After an odd run of backslashes this one is itself escaped (`\\u0061` is a backslash and the text u0061).
    let before = 0;
    while (i - before > 0 && text.charCodeAt(i - before - 1) === 0x5c) before++;
    if (before % 2 === 0 && ESCAPED_KEY_CHAR.test(text.slice(i, i + 6))) return true;
  }
  return false;
}

function unescapedKeyChars(text: string): Unescaped | undefined {
  if (!hasEscapedKeyChar(text)) return undefined;
  const at = new Int32Array(text.length + 1);
  const parts: string[] = [];
  let n = 0;
  let from = 0;
  const copy = (to: number) => {
    for (let i = from; i < to; i++) at[n++] = i;
    if (to > from) parts.push(text.slice(from, to));
    from = to;
  };
  for (let i = text.indexOf('\\'); i >= 0 && i < text.length; i = text.indexOf('\\', i)) {
    if (text[i + 1] === '\\') {
      // An escaped backslash: `\\u0061` is a backslash and the text `u0061`.
      i += 2;
      continue;
    }
    if (text[i + 1] === 'u' && ESCAPED_KEY_CHAR.test(text.slice(i, i + 6))) {
      copy(i);
      at[n++] = i;
      parts.push(String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)));
      from = i += 6;
      continue;
    }
    i += 1;
  }
  copy(text.length);
  at[n] = text.length;
  return { plain: parts.join(''), at: at.subarray(0, n + 1) };
}

interface KeySpan {
  /** Where the secret starts and ends in the original text (context before it excluded). */
  start: number;
  end: number;
  label: string;
  /** The secret as decoded (for the report's preview). */
  secret: string;
}

/** Every key pattern's accepted matches in the unescaped text, mapped back, earlier patterns first, none overlapping. */
function keySpans(text: string, u: Unescaped): KeySpan[] {
  const spans: KeySpan[] = [];
  for (const { label, re, accept } of KEY_PATTERNS) {
    re.lastIndex = 0;
    for (const m of u.plain.matchAll(re)) {
      if (accept && !accept(m)) continue;
      const s = m.index + (m[1]?.length ?? 0);
      const e = m.index + m[0].length;
      if (e <= s) continue;
      const start = u.at[s];
      const end = u.at[e];
      if (text.startsWith('[REDACTED:', start) || spans.some((x) => x.start < end && start < x.end)) continue;
      spans.push({ start, end, label, secret: u.plain.slice(s, e) });
    }
  }
  return spans.sort((a, b) => a.start - b.start);
}

function replaceSpans(text: string, spans: KeySpan[], by: (span: KeySpan) => string): string {
  if (spans.length === 0) return text;
  let out = '';
  let last = 0;
  for (const span of spans) {
    out += text.slice(last, span.start) + by(span);
    last = span.end;
  }
  return out + text.slice(last);
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

export interface UrlStyle {
  /** Where the URL is, for the report (default `url`). */
  where?: string;
  /**
   * Placeholders for text a person reads (exports, banners, error lines): `key=[REDACTED:url-credential]`. Without it
   * they are percent-encoded (`key=%5BREDACTED%3Aquery-key%5D`), so a stored URL still parses.
   */
  readable?: boolean;
}

/**
 * The one redaction of a URL (an upstream's base URL, a request path, a stored upstream URL), used before a URL is
 * put in any text: the userinfo (`https://user:pass@host`, `https://TOKEN@host`) and the value of every query
 * parameter whose name says credential (`?key=`, `&api_key=`, `apikey`, `token`, `access_token`, `secret`,
 * `password`, `sig`, `signature`, `auth…`: `isSecretName`) are replaced, and the rest is scanned for key shapes like any
 * text.
 */
export function redactUrl(url: string, opts: RedactOptions = {}, style: UrlStyle = {}): string {
  const where = style.where ?? 'url';
  const shown = (label: string) => (style.readable ? placeholder(label) : encodeURIComponent(placeholder(label)));
  let out = url;
  const user = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#@\s]*)@/.exec(out);
  if (user && user[2] !== '' && !/^(?:\[|%5B)REDACTED/i.test(user[2])) {
    opts.report?.push({ label: 'url-userinfo', where, preview: preview(user[2]) });
    out = `${user[1]}${shown('url-userinfo')}@${out.slice(user[0].length)}`;
  }
  const q = out.indexOf('?');
  if (q < 0) return redactText(out, opts, where);
  const hash = out.indexOf('#', q);
  const end = hash < 0 ? out.length : hash;
  const params = out
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
      if (!isSecretName(name) || value === '' || /^(?:\[|%5B)REDACTED/i.test(value)) return pair;
      const label = style.readable ? 'url-credential' : `query-${name.toLowerCase().replace(/[^a-z0-9_-]/g, '')}`;
      opts.report?.push({ label, where, preview: preview(value) });
      return `${pair.slice(0, eq)}=${shown(label)}`;
    })
    .join('&');
  return redactText(out.slice(0, q + 1) + params + out.slice(end), opts, where);
}

/** Every URL in a line of text (an error message, a log line) through `redactUrl`, readable. */
export function redactUrlsIn(text: string, opts: RedactOptions = {}, where = 'text'): string {
  const out = text.replace(/\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>`]+/g, (u) => redactUrl(u, opts, { where, readable: true }));
  return redactText(out, opts, where);
}

/** True when text still holds something key-shaped (used by tests and as a last guard before writing exports). */
export function containsSecret(text: string): boolean {
  if (!hinted(text)) return false;
  const escaped = unescapedKeyChars(text);
  if (escaped) return keySpans(text, escaped).length > 0;
  return KEY_PATTERNS.some(({ re, accept }) => {
    re.lastIndex = 0;
    if (!accept) {
      const hit = re.test(text);
      re.lastIndex = 0;
      return hit;
    }
    for (const m of text.matchAll(re)) if (!m[0].slice(m[1]?.length ?? 0).startsWith('[REDACTED:') && accept(m)) return true;
    return false;
  });
}

/** The key patterns as maskSecrets runs them (built once: it runs on every response chunk). */
const KEY_MASK_RULES = KEY_PATTERNS.map(({ label, re, accept }) => ({ label, re, reported: label, context: true, accept }));
/**
 * All key patterns in one, case-insensitive: it matches wherever any of them does (and a little more). Most chunks
 * hold no key, and this one scan rules them out in about half the time of testing each pattern.
 */
const ANY_KEY = new RegExp(KEY_PATTERNS.map(({ re }) => `(?:${re.source})`).join('|'), 'i');
/**
 * The literal start of every key pattern above, as one cheap pass: text holding none of these holds no key, and the
 * full pattern set (ANY_KEY's lookbehinds make it several times slower) never runs on it. This is the per-chunk scan
 * on the proxy's forwarding path. Keep it in step with KEY_PATTERNS (and ESCAPED_KEY_CHAR: a key may be spelled
 * with escapes).
 */
const KEY_HINT = new RegExp(
  [
    'sk-',
    'hf_',
    'aiza',
    'gh[opsu]_',
    'github_pat_',
    'a[ks]ia',
    'gsk_',
    'fw_',
    'xai-',
    'tgp_v1_',
    'xox[abprs]-',
    'bearer',
    'api[_-]?key',
    // AWS session tokens
    'iqojb3jpz2lu',
    'fwogzxivyxdz',
    'fqogzxivyxdz',
    // secret-named fields, header lines and assignments, and URL query credentials (`key=`, `access_token=`, `sig=`)
    'cookie',
    'authoriz',
    'passw',
    'passphrase',
    'secret',
    'credential',
    'portkey',
    String.raw`(?:key|token)\\?"?[ \t]*[:=]`,
    String.raw`auth\\?"?[ \t]*[:=]`,
    'sig(?:nature)?=',
    ESCAPED_KEY_CHAR.source,
  ].join('|'),
  'i',
);
/** The longest hint looked for across a chunk boundary. */
const KEY_HINT_MAX = 64;

/**
 * Whether text holds a key hint: KEY_HINT, or a URL (its userinfo may be a credential). Kept apart: in one regular
 * expression with the rest, `://` made the scan of every chunk several times slower.
 */
function hinted(text: string): boolean {
  return KEY_HINT.test(text) || text.includes('://');
}

/**
 * False when `maskSecrets` (without user patterns) cannot change `before` followed by `bytes`, given whether `before`
 * alone holds a key hint: no hint in `bytes`, none across the seam. Looks at `bytes` and a few bytes of `before` only.
 */
export function mayMaskAcross(before: Uint8Array, beforeHinted: boolean, bytes: Uint8Array): boolean {
  if (beforeHinted || hinted(latin1(bytes))) return true;
  if (before.length === 0) return false;
  const edge = KEY_HINT_MAX - 1;
  return hinted(latin1(before.subarray(Math.max(0, before.length - edge))) + latin1(bytes.subarray(0, edge)));
}

/** Whether `bytes` hold a key hint (a key pattern can only match where one does). */
export function hasKeyHint(bytes: Uint8Array): boolean {
  return hinted(latin1(bytes));
}

function latin1(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

/** `placeholder(label)` cut or padded with `*` to `length` characters. */
function sameLength(label: string, length: number): string {
  const p = placeholder(label);
  return length <= p.length ? p.slice(0, length) : p.padEnd(length, '*');
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
  const hint = hinted(text);
  let changed = false;
  const escaped = hint ? unescapedKeyChars(text) : undefined;
  if (escaped) {
    // Keys spelled with JSON escapes: found in the unescaped text, masked over their escaped spelling (all ASCII).
    const spans = keySpans(text, escaped);
    for (const span of spans) opts.report?.push({ label: span.label, where, preview: preview(span.secret) });
    const out = replaceSpans(text, spans, (span) => sameLength(span.label, span.end - span.start));
    changed = out !== text;
    text = out;
  }
  const keyRules = !escaped && hint && ANY_KEY.test(text) ? KEY_MASK_RULES : [];
  const rules = opts.patterns?.length
    ? [
        ...keyRules,
        ...opts.patterns.map(({ label, pattern }) => ({
          label,
          re: compile(pattern),
          reported: `user-pattern:${label}`,
          context: false,
          accept: undefined,
        })),
      ]
    : keyRules;
  for (const { label, re, reported, context, accept } of rules) {
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
      if (accept && !accept(m)) continue;
      let start = Math.max(at, last);
      let end = m.index + m[0].length;
      while (start > last && inside(start)) start--;
      while (inside(end)) end++;
      if (end <= start) continue;
      opts.report?.push({ label: reported, where, preview: preview(text.slice(start, end)) });
      out += text.slice(last, start) + sameLength(label, end - start);
      last = end;
    }
    if (last === 0) continue;
    text = out + text.slice(last);
    changed = true;
  }
  if (!changed) return input;
  return (bytes ? Buffer.from(text, 'latin1') : text) as T;
}

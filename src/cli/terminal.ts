/**
 * Terminal-safe output. Text that came from the network (upstream error bodies, model names, User-Agents, finding
 * messages that quote them) reaches the terminal only through `safeLine`/`safeText`: control characters are
 * escaped (`ESC]0;…BEL` cannot retitle the window, `\r` cannot overwrite a line, CSI cannot move the cursor), and a
 * long body is cut, the cut said. Colour (severity, rule ids) is added after escaping, only on a terminal.
 *
 * Colour is safe by construction: the palette does not write escape sequences, it writes markers that only this
 * process can make, and `terminalGuard` turns just those into colour. Every ESC that reaches the guard is shown
 * escaped (`\e[31m`), so network text that a command forgot to pass through `safeLine` still cannot colour, hide
 * (`ESC[8m`), blink or retitle anything.
 */
import { randomBytes } from 'node:crypto';
import type { Finding, Severity } from '../core/model';

/** The most characters one network-sourced field prints (a 5 MB error body is cut here). */
export const MAX_FIELD = 1000;
/** The most characters a multi-line network-sourced text prints. */
export const MAX_TEXT = 20_000;

// C0 (but \n and \t in multi-line text), DEL, C1, line/paragraph separators, bidi overrides and isolates, BOM, and
// the noncharacters U+FDD0–U+FDEF the palette's markers are made of (so network text never carries one).
const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufeff]/g;
const UNSAFE_CHAR = new RegExp(UNSAFE_LINE.source);
const UNSAFE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufeff]/g;

function escapeControl(c: string): string {
  switch (c) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    case '\u001b':
      return '\\e';
  }
  const cp = c.codePointAt(0)!;
  // A marker character is written `\ufdd0`, which is also a valid escape inside a JSON string (--json on a terminal).
  if (cp >= 0xfdd0 && cp <= 0xfdef) return `\\u${cp.toString(16)}`;
  return `\\u{${cp.toString(16)}}`;
}

/**
 * One character as it is shown: itself when it is safe on a terminal, else its escape (`\\e`, `\\r`, `\\u{7}`…),
 * exactly as `safeLine` shows it. For code that lays text out character by character (lint's excerpt and caret).
 */
export function escapeChar(c: string): string {
  return UNSAFE_CHAR.test(c) ? escapeControl(c) : c;
}

/** Terminal columns of a short, already escaped string: 2 for East Asian wide and full-width characters, 1 otherwise. */
export function columns(s: string): number {
  let w = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const wide =
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) ||
      (cp >= 0x1f300 && cp <= 0x1faff) ||
      (cp >= 0x20000 && cp <= 0x3fffd);
    w += wide ? 2 : 1;
  }
  return w;
}

/** The first `max` characters (never half a surrogate pair) and how many were left out. */
function head(text: string, max: number): { text: string; left: number } {
  if (text.length <= max) return { text, left: 0 };
  const end = /[\ud800-\udbff]/.test(text[max - 1]) ? max - 1 : max;
  return { text: text.slice(0, end), left: text.length - end };
}

const cutNote = (left: number) => `[cut: ${left.toLocaleString('en-US')} more characters]`;

/** One line of network text: every control character escaped (newlines too), at most `max` characters. */
export function safeLine(text: string | undefined, max = MAX_FIELD): string {
  if (text === undefined) return '';
  const h = head(text, max);
  return h.text.replace(UNSAFE_LINE, escapeControl) + (h.left ? `… ${cutNote(h.left)}` : '');
}

/** Multi-line network text: newlines and tabs kept, every other control character escaped, at most `max` characters. */
export function safeText(text: string, max = MAX_TEXT): string {
  const h = head(text, max);
  return h.text.replace(UNSAFE_TEXT, escapeControl) + (h.left ? `…\n${cutNote(h.left)}` : '');
}

/**
 * The palette's markers. A marker is U+FDD0 (a Unicode noncharacter, reserved for a program's internal use), a
 * nonce of 16 noncharacters drawn at random once per process (64 bits: network text cannot guess it, and it never
 * leaves the process, since the guard replaces it), then one noncharacter naming the style (an index in STYLES).
 * Noncharacters are escaped by `safeLine`/`safeText` and by the guard, so a marker-looking string from the network is
 * shown escaped, and only the few styles below can ever be produced.
 */
const STYLES = ['0', '1', '2', '31;1', '33', '36', '35'] as const;
type Style = (typeof STYLES)[number];
const NONCE = Array.from(randomBytes(16), (b) => String.fromCharCode(0xfde0 + (b & 15))).join('');
const MARKS = new Map<Style, string>(STYLES.map((code, i) => [code, `\ufdd0${NONCE}${String.fromCharCode(0xfdd1 + i)}`]));
const SEQUENCES = STYLES.map((code) => `\u001b[${code}m`);
// One pass: a whole marker (its last character names the style), or one character to escape (C0 but \n and \t,
// DEL, C1, every ESC, the marker characters).
const LAST_STYLE = String.fromCharCode(0xfdd1 + STYLES.length - 1);
const GUARD = new RegExp(`\ufdd0${NONCE}[\ufdd1-${LAST_STYLE}]|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufdd0-\ufdef]`, 'g');
const guardOne = (m: string) => (m.length === 1 ? escapeControl(m) : SEQUENCES[m.charCodeAt(m.length - 1) - 0xfdd1]);

/**
 * The last guard before the terminal, for text already formatted: Tokenscope's own colour markers (see `palette`)
 * become their SGR sequences; every other control character but newline and tab is escaped, every ESC included (an
 * `ESC[31m` or `ESC[8m` from the network is shown as `\e[31m`), as are the marker characters U+FDD0–U+FDEF. Text
 * without colour comes out unchanged unless it holds such characters.
 */
export function terminalGuard(text: string): string {
  return text.replace(GUARD, guardOne);
}

export interface Palette {
  readonly on: boolean;
  severity(s: Severity, text?: string): string;
  rule(id: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const SGR = (code: Style) => (text: string) => `${MARKS.get(code)}${text}${MARKS.get('0')}`;
const SEVERITY: Record<Severity, (t: string) => string> = { error: SGR('31;1'), warning: SGR('33'), info: SGR('36') };

export function palette(on: boolean): Palette {
  return {
    on,
    severity: (s, text = s) => (on ? SEVERITY[s](text) : text),
    rule: (id) => (on ? SGR('35')(id) : id),
    dim: (t) => (on ? SGR('2')(t) : t),
    bold: (t) => (on ? SGR('1')(t) : t),
  };
}

/**
 * Whether stdout gets colour: a terminal, unless NO_COLOR is set (https://no-color.org), TERM is `dumb` or the
 * command was given --no-color (main.ts). FORCE_COLOR=1 turns it on when piped.
 */
export function colourWanted(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** `error section-unclosed (content): message`, the message made safe, severity and rule coloured when `p` is on. */
export function findingLine(f: Pick<Finding, 'severity' | 'rule' | 'location' | 'message'>, p: Palette, max = MAX_FIELD): string {
  return `${p.severity(f.severity)} ${p.rule(f.rule)} (${safeLine(f.location, 200)}): ${safeLine(f.message, max)}`;
}

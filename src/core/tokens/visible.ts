/**
 * Token bytes as a readable label: spaces `·`, newlines `↵`, tabs `→`, carriage returns `␍`, other control
 * characters and bytes that are not valid UTF-8 on their own (half of an emoji split across tokens) as `\xNN`.
 */

const SHOWN: Record<string, string> = { ' ': '·', '\n': '↵', '\t': '→', '\r': '␍' };

export function visibleBytes(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const n = utf8SequenceLength(bytes, i);
    if (n === 0) {
      out += hex(bytes[i]);
      i++;
      continue;
    }
    out += visibleChar(Buffer.from(bytes.buffer, bytes.byteOffset + i, n).toString('utf8'));
    i += n;
  }
  return out;
}

/** True when every byte belongs to a complete, valid UTF-8 sequence. */
export function isCompleteUtf8(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; ) {
    const n = utf8SequenceLength(bytes, i);
    if (n === 0) return false;
    i += n;
  }
  return true;
}

function visibleChar(ch: string): string {
  const shown = SHOWN[ch];
  if (shown) return shown;
  const cp = ch.codePointAt(0)!;
  if (cp < 0x20 || cp === 0x7f) return hex(cp);
  if ((cp >= 0x80 && cp < 0xa0) || cp === 0x2028 || cp === 0x2029 || cp === 0xfeff) return `\\u{${cp.toString(16)}}`;
  return ch;
}

function hex(b: number): string {
  return `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;
}

/** Length of the valid UTF-8 sequence starting at `i` (1–4), or 0 when the byte there does not start one. */
function utf8SequenceLength(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c < 0x80) return 1;
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c === 0xe0) lo = 0xa0; // no overlong forms
    if (c === 0xed) hi = 0x9f; // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c === 0xf0) lo = 0x90;
    if (c === 0xf4) hi = 0x8f;
  } else return 0;
  if (i + n > b.length) return 0;
  if (b[i + 1] < lo || b[i + 1] > hi) return 0;
  for (let k = 2; k < n; k++) if (b[i + k] < 0x80 || b[i + k] > 0xbf) return 0;
  return n;
}

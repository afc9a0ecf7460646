/**
 * How the capture database keeps an analysis: each text once. A turn's reasoning, content and tool-call arguments are
 * parts of its native text (`analysis.native.text`, raw or rendered), so the row holds them as ranges of that text, and
 * reading puts the same strings back: every reader gets the very object the analysis produced. Before, a 16 MB
 * response's row held its text two or three times (about 30 MB of database for 16 MB of dense text; now about 7 MB).
 *
 * The row's `version`, for analysis version V (./analysis.ts ANALYSIS_VERSION):
 * - V: the StoredAnalysis as it is (the previous release writes only this; still read). Also written when no text of
 *   the turn is long enough to be worth a range, so such a row reads in any release.
 * - 1000 + V: the same analysis, each text found in the native text replaced by "" and its ranges listed in `texts`.
 * - 2000 + V: a row of one of the forms above that reached a megabyte, deflated (`deflated`, in base64: the row stays
 *   JSON text). Such a row is written by the capture worker thread, on its own connection (./capture-worker.ts).
 * A release that knows only the first form finds no stored analysis in a row of the others: it analyses the exchange's
 * body itself, as it does for an exchange its writer has not analysed yet. It shows the same result and loses nothing.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AssistantMessage, SegmentKind } from '../model';
import type { StoredAnalysis } from './analysis';

/** Added to the analysis version in a row whose texts are ranges, and in a deflated row. */
const TEXTS_ONCE = 1000;
const DEFLATED = 2000;
/** Rows from this size on are deflated (only a large exchange's, analysed on the capture worker thread, get there). */
const DEFLATE_FROM_CHARS = 1 << 20;
/** Texts shorter than this stay in place: a range would take about as much room. */
const MIN_RANGE_CHARS = 64;

/**
 * A text of the message (`reasoning`, `content`, or a tool call's arguments by position) and its pieces: a range of the
 * native text as two numbers (start, end), or a few characters the native text does not hold there (the line break a
 * parser puts between the parts of content around a tool-call section).
 */
type TextRange = [field: 'reasoning' | 'content' | number, ...pieces: (number | string)[]];
/** The longest run of characters between two parts that is stored as it is. */
const MAX_GAP_CHARS = 16;

/** The row text for `stored`. */
export function packAnalysis(stored: StoredAnalysis): string {
  const row = textsOnce(stored);
  if (row.length < DEFLATE_FROM_CHARS) return row;
  // Level 1: most of the size for a fraction of the time of the default level.
  return JSON.stringify({ version: DEFLATED + stored.version, deflated: deflateRawSync(row, { level: 1 }).toString('base64') });
}

function textsOnce(stored: StoredAnalysis): string {
  const { native, message } = stored.analysis;
  const texts: TextRange[] = [];
  const once = (field: TextRange[0], value: string, kind: SegmentKind): string => {
    const ranges = rangesOf(native.text, native.segments, value, kind);
    if (!ranges) return value;
    texts.push([field, ...ranges]);
    return '';
  };
  // A shallow copy in the same key order: the analysis the caller holds is not changed.
  const packed: AssistantMessage = { ...message };
  if (packed.reasoning !== undefined) packed.reasoning = once('reasoning', packed.reasoning, 'reasoning');
  if (packed.content !== undefined) packed.content = once('content', packed.content, 'content');
  packed.toolCalls = message.toolCalls.map((c, i) => {
    const args = once(i, c.arguments, 'arguments');
    return args === c.arguments ? c : { ...c, arguments: args };
  });
  if (texts.length === 0) return JSON.stringify(stored);
  return JSON.stringify({
    version: TEXTS_ONCE + stored.version,
    summary: stored.summary,
    analysis: { ...stored.analysis, message: packed },
    texts,
  });
}

/** The StoredAnalysis a parsed row holds; undefined for a row of a version this release does not know, or a damaged one. */
export function unpackAnalysis(row: unknown): StoredAnalysis | undefined {
  const v = row as (StoredAnalysis & { texts?: TextRange[] }) | undefined;
  if (typeof v !== 'object' || v === null) return undefined;
  if (typeof v.version !== 'number') return undefined;
  if (v.version < TEXTS_ONCE) return v;
  if (v.version >= DEFLATED) return inflated(v as unknown as { version: number; deflated?: unknown });
  if (!Array.isArray(v.texts)) return undefined;
  const { texts, ...stored } = v;
  try {
    const text = stored.analysis.native.text;
    const message = stored.analysis.message;
    for (const [field, ...ranges] of texts) {
      let s = '';
      for (let i = 0; i < ranges.length; i++) {
        const [start, end] = [ranges[i], ranges[i + 1]];
        if (typeof start === 'string') s += start;
        else if (typeof end === 'number' && start >= 0 && start <= end && end <= text.length) (s += text.slice(start, end)), i++;
        else return undefined;
      }
      if (typeof field === 'number') message.toolCalls[field].arguments = s;
      else if (field === 'reasoning' || field === 'content') message[field] = s;
      else return undefined;
    }
  } catch {
    return undefined; // a damaged row: the reader analyses the exchange instead
  }
  return { ...stored, version: stored.version - TEXTS_ONCE };
}

function inflated(v: { version: number; deflated?: unknown }): StoredAnalysis | undefined {
  if (typeof v.deflated !== 'string') return undefined;
  let inner: unknown;
  try {
    inner = JSON.parse(inflateRawSync(Buffer.from(v.deflated, 'base64')).toString('utf8'));
  } catch {
    return undefined; // a damaged row: the reader analyses the exchange instead
  }
  const version = (inner as { version?: unknown } | null)?.version;
  if (typeof version !== 'number' || version >= DEFLATED) return undefined;
  const stored = unpackAnalysis(inner);
  return stored?.version === v.version - DEFLATED ? stored : undefined;
}

/**
 * Where `value` is in `text`: the segments of its kind in order (one, or content around a tool-call section, with
 * what the parser kept or put between them), or anywhere. The pieces always make `value` exactly; undefined when it
 * is not there.
 */
function rangesOf(
  text: string,
  segments: { kind: SegmentKind; start: number; end: number }[],
  value: string,
  kind: SegmentKind,
): (number | string)[] | undefined {
  if (value.length < MIN_RANGE_CHARS) return undefined;
  const own = segments.filter((s) => s.kind === kind && s.end > s.start);
  if (own.length > 0) {
    const pieces: (number | string)[] = [];
    let at = 0; // in value
    let end = 0; // in text: where the last piece ends
    for (const s of own) {
      if (s.start < end) continue; // within the last piece
      const piece = text.slice(s.start, s.end);
      let found = -1;
      for (let k = at; k <= at + MAX_GAP_CHARS && found < 0; k++) if (value.startsWith(piece, k)) found = k;
      if (found < 0) break;
      if (found > at) pieces.push(value.slice(at, found));
      // The piece goes on as long as both go on alike (markers the parser left in content).
      let e = s.end;
      let v = found + s.end - s.start;
      while (e < text.length && v < value.length && text.charCodeAt(e) === value.charCodeAt(v)) e++, v++;
      pieces.push(s.start, e);
      at = v;
      end = e;
    }
    if (value.length - at <= MAX_GAP_CHARS && pieces.length > 0) return at < value.length ? [...pieces, value.slice(at)] : pieces;
  }
  const at = text.indexOf(value);
  return at >= 0 ? [at, at + value.length] : undefined;
}

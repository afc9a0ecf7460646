/**
 * Token row layout and virtualization math for the Tokens tab. Pure: no DOM, so it is unit-tested in Node and
 * measured on 200,000-token streams.
 *
 * The view is a monospace grid of fixed-height rows. Tokens flow left to right as chips; a row ends when the next
 * chip would pass the column limit or after a token containing a newline (each extra newline adds an empty row,
 * like the text it came from). Only rows inside the viewport are ever turned into DOM.
 */
import type { FindingView } from './protocol';

/** Extra columns a chip takes beyond its text (padding and border). */
export const CHIP_PAD_COLS = 1;

/** What a chip shows for a token's text: visible whitespace on demand, never raw control characters. */
export function displayText(text: string, showWhitespace: boolean): string {
  let out = '';
  for (const ch of text) {
    if (ch === '\n') out += showWhitespace ? '↵' : '';
    else if (ch === '\r') out += showWhitespace ? '␍' : '';
    else if (ch === '\t') out += showWhitespace ? '→' : '  ';
    else if (ch === ' ') out += showWhitespace ? '·' : ' ';
    else {
      const code = ch.codePointAt(0)!;
      // C0/C1 controls and lone surrogates would be invisible or break layout: show them as escapes.
      out += code < 0x20 || (code >= 0x7f && code < 0xa0) ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
    }
  }
  return out;
}

/** What a ghost chip says (after its icon). */
export function ghostText(label: string): string {
  return `expected here: ${label}`;
}

/** Extra columns of a ghost chip beyond its text: the icon and wider padding. */
const GHOST_PAD_COLS = 4;

/** A place in the flow where something that is not a token is drawn: the "expected here" ghost of a missing marker. */
export interface Ghost {
  /** Draw before this token index (tokens.length = after the last token). */
  beforeToken: number;
  label: string;
  /** Index of the finding it belongs to. */
  finding: number;
}

export interface LayoutInput {
  texts: readonly string[];
  /** Columns per row (viewport width / character width). */
  cols: number;
  showWhitespace: boolean;
  ghosts?: readonly Ghost[];
  /** Stop after this many rows (a quick first screen; the full layout follows). */
  maxRows?: number;
}

/**
 * The flow of chips in rows. `items` lists what is drawn, in order: a token index (≥ 0) or a ghost (−1 − ghost
 * index). Row r holds items[rowStart[r] .. rowStart[r + 1]).
 */
export interface Layout {
  items: Int32Array;
  rowStart: Int32Array;
  rowCount: number;
  /** Row of each token, for scrolling to a token (0 for tokens past a partial layout). */
  tokenRow: Int32Array;
  /** False when `maxRows` cut the layout short. */
  complete: boolean;
}

export function layoutRows({ texts, cols, showWhitespace, ghosts = [], maxRows = Infinity }: LayoutInput): Layout {
  const limit = Math.max(8, cols);
  const sortedGhosts = ghosts.map((g, i) => ({ g, i })).sort((a, b) => a.g.beforeToken - b.g.beforeToken);
  const total = texts.length;
  const items = new Int32Array(total + sortedGhosts.length);
  const tokenRow = new Int32Array(total);
  // One row per item at most, plus the empty rows of blank lines; grown on demand.
  let rowStart = new Int32Array(Math.max(16, total + sortedGhosts.length + 1));
  let rows = 0;
  let n = 0;
  let col = 0;
  /** False after a newline: the next chip starts a row. */
  let rowOpen = false;
  let gi = 0;
  let complete = true;
  // This loop runs once per token (200,000 times for a long response): plain locals, no closures, no allocation.
  tokens: for (let t = 0; t <= total; t++) {
    let ghost = gi < sortedGhosts.length && sortedGhosts[gi].g.beforeToken <= t ? sortedGhosts[gi] : undefined;
    while (ghost || t < total) {
      let width: number;
      let newlines = 0;
      if (ghost) width = ghostText(ghost.g.label).length + GHOST_PAD_COLS;
      else {
        const text = texts[t];
        width = CHIP_PAD_COLS;
        for (let i = 0; i < text.length; i++) {
          const c = text.charCodeAt(i);
          if (c === 10) newlines++;
          if (c === 10 || c === 13) width += showWhitespace ? 1 : 0;
          else if (c === 9) width += showWhitespace ? 1 : 2;
          else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) width += 4;
          else if (c < 0xd800 || c > 0xdbff) width += 1; // a surrogate pair counts once, at its low half
        }
      }
      // A blank line in the text is an empty row in the view: newlines beyond the first add rows.
      const newRows = (!rowOpen || (col > 0 && col + width > limit) ? 1 : 0) + Math.max(0, newlines - 1);
      if (rows + newRows > maxRows) {
        complete = false;
        break tokens;
      }
      if (rows + newRows + 1 >= rowStart.length) {
        const grown = new Int32Array(rowStart.length * 2);
        grown.set(rowStart);
        rowStart = grown;
      }
      if (!rowOpen || (col > 0 && col + width > limit)) {
        rowStart[rows++] = n;
        col = 0;
        rowOpen = true;
      }
      col += width;
      if (ghost) {
        items[n++] = -1 - ghost.i;
        gi++;
        ghost = gi < sortedGhosts.length && sortedGhosts[gi].g.beforeToken <= t ? sortedGhosts[gi] : undefined;
        continue;
      }
      tokenRow[t] = rows - 1;
      items[n++] = t;
      if (newlines > 0) {
        for (let k = 1; k < newlines; k++) rowStart[rows++] = n;
        rowOpen = false;
      }
      break;
    }
  }
  rowStart[rows] = n;
  return { items, rowStart: rowStart.subarray(0, rows + 1), rowCount: rows, tokenRow, complete };
}

/**
 * Rows [first, last) the view shows for a scroll position: whole rows only. The rows are drawn from the top edge of
 * the viewport (they stay there while the view scrolls, and move a row at a time), so no row is ever cut by the
 * edge, nor half under what sits above the view: the finding chips, the toolbar. The first row shown is the first
 * one that lies whole below the top edge (a scroll height of `rowCount * rowHeight` then ends on the last row).
 */
export function visibleRows(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  rowCount: number,
): { first: number; last: number } {
  const fit = rowsThatFit(viewportHeight, rowHeight);
  // A hair under a row boundary (fractional scroll offsets on zoomed screens) is that boundary.
  const top = Math.ceil(scrollTop / rowHeight - 0.01);
  const first = Math.max(0, Math.min(rowCount - fit, top));
  return { first, last: Math.min(rowCount, first + fit) };
}

/** Whole rows in a viewport (at least one). */
export function rowsThatFit(viewportHeight: number, rowHeight: number): number {
  return Math.max(1, Math.floor(viewportHeight / rowHeight));
}

export interface TokenMarks {
  /** Worst severity per token: 0 none, 1 info, 2 warning, 3 error. */
  severity: Uint8Array;
  /** First finding index per token (−1 none), for hover text and clicks. */
  finding: Int32Array;
  /** Where each finding is drawn: its first token (or ghost) index, for scrolling to it. */
  anchors: { finding: number; token: number }[];
  ghosts: Ghost[];
}

const SEVERITY_RANK = { info: 1, warning: 2, error: 3 } as const;

/** Per-token marks from findings already placed on tokens (`tokens`, `expectedBefore`), and ghosts for missing markers. */
export function markFindings(tokenCount: number, findings: readonly FindingView[]): TokenMarks {
  const severity = new Uint8Array(tokenCount);
  const finding = new Int32Array(tokenCount).fill(-1);
  const anchors: TokenMarks['anchors'] = [];
  const ghosts: Ghost[] = [];
  findings.forEach((f, fi) => {
    if (f.expectedBefore !== undefined) {
      ghosts.push({ beforeToken: Math.min(f.expectedBefore, tokenCount), label: f.expectedMarker ?? 'missing marker', finding: fi });
    }
    const [a, b] = f.tokens ?? [tokenCount, tokenCount];
    if (a < tokenCount) {
      anchors.push({ finding: fi, token: a });
      const rank = SEVERITY_RANK[f.severity];
      for (let t = a; t < Math.min(b, tokenCount); t++) {
        if (rank > severity[t]) severity[t] = rank;
        if (finding[t] === -1) finding[t] = fi;
      }
    } else if (f.expectedBefore !== undefined) {
      anchors.push({ finding: fi, token: Math.min(f.expectedBefore, tokenCount) });
    }
  });
  return { severity, finding, anchors, ghosts };
}

/** UTF-8 bytes of a token as hex, for the hover (`e2 80 94`). */
export function utf8Hex(text: string): string {
  return Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join(' ');
}

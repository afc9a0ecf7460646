/**
 * The virtualized token view: chips in fixed-height rows, only the rows in the viewport exist in the DOM, so a
 * 200,000-token response costs the same to draw as a 200-token one. Layout math lives in layout.ts.
 *
 * The rows sit in a sticky layer at the top of the scroller and show whole rows only: scrolling moves them a row at
 * a time, so a row is never cut by the top edge (half under the finding chips above the view) or the bottom one.
 */
import { h, icon } from './dom';
import {
  displayText,
  ghostText,
  layoutRows,
  markFindings,
  rowsThatFit,
  utf8Hex,
  visibleRows,
  type Layout,
  type TokenMarks,
} from './layout';
import { SEGMENT_KINDS, TOKEN_KINDS, type FindingView, type TokenStreamView } from './protocol';

export const ROW_HEIGHT = 22;
/** Rows laid out before the first paint: more than any viewport shows. */
const FIRST_ROWS = 200;
const SEVERITY_CLASS = ['', 'f-info', 'f-warning', 'f-error'];
const SEVERITY_ICON = ['', 'info', 'warning', 'error'];

export class TokenGrid {
  readonly element: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly rowsEl: HTMLElement;
  private layout: Layout | undefined;
  private marks: TokenMarks | undefined;
  private charWidth = 0;
  private cols = 0;
  private frame = 0;
  private drawn = { first: -1, last: -1 };
  private flash: { token: number; ghost?: number } | undefined;
  private pendingScroll: number | undefined;

  private readonly findings: readonly FindingView[];

  constructor(
    private readonly stream: TokenStreamView,
    private showWhitespace: boolean,
    private readonly onFinding: (index: number) => void,
  ) {
    this.spacer = h('div', { class: 'spacer' });
    this.rowsEl = h('div', { class: 'rows', role: 'presentation' });
    // The rows first: a sticky layer of no height at the top of the scroller; the spacer after it gives the height.
    this.scroller = h('div', { class: 'scroller', tabindex: 0, role: 'region', 'aria-label': 'Token stream' }, this.rowsEl, this.spacer);
    this.element = this.scroller;
    this.scroller.addEventListener('scroll', () => this.schedule());
    // The user scrolling wins over a saved position still waiting to be applied.
    for (const e of ['wheel', 'keydown', 'pointerdown', 'touchstart'])
      this.scroller.addEventListener(e, () => (this.pendingScroll = undefined), { passive: true });
    this.rowsEl.addEventListener('click', (e) => {
      const target = (e.target as HTMLElement).closest<HTMLElement>('[data-finding]');
      if (target) this.onFinding(Number(target.dataset.finding));
    });
    new ResizeObserver(() => {
      if (!this.layout) return;
      if (this.measure()) this.relayout();
      else {
        // A new height changes how many rows fit.
        this.restoreScroll();
        this.drawn = { first: -1, last: -1 };
        this.schedule();
      }
    }).observe(this.scroller);
    this.findings = stream.findings;
    this.marks = markFindings(stream.ids.length, this.findings);
  }

  get scrollTop(): number {
    return this.scroller.scrollTop;
  }

  set scrollTop(v: number) {
    this.scroller.scrollTop = v;
  }

  setShowWhitespace(on: boolean): void {
    this.showWhitespace = on;
    this.relayout();
  }

  /** Scrolls a finding's tokens (or its ghost marker) into the middle of the view and flashes them. */
  revealFinding(index: number): boolean {
    const anchor = this.marks?.anchors.find((a) => a.finding === index);
    if (!anchor || !this.layout) return false;
    if (!this.layout.complete) this.relayout();
    const layout = this.layout;
    const ghost = this.marks!.ghosts.findIndex((g) => g.finding === index);
    const row = anchor.token < layout.tokenRow.length ? layout.tokenRow[anchor.token] : layout.rowCount - 1;
    this.flash = { token: anchor.token, ghost: ghost >= 0 ? ghost : undefined };
    this.scroller.scrollTop = Math.max(0, row - Math.floor(rowsThatFit(this.viewportHeight(), ROW_HEIGHT) / 2)) * ROW_HEIGHT;
    this.drawn = { first: -1, last: -1 };
    this.draw();
    return true;
  }

  /** Character width of the monospace font, and columns per row; true when the columns changed. */
  private measure(): boolean {
    if (!this.charWidth) {
      const probe = h('span', { class: 'tok measure' }, 'M'.repeat(50));
      this.rowsEl.appendChild(probe);
      this.charWidth = probe.getBoundingClientRect().width / 50 || 7.8;
      probe.remove();
    }
    const width = this.scroller.clientWidth || 800;
    // Gutter, scrollbar and a margin for chip borders the column count does not see.
    const cols = Math.max(20, Math.floor((width - 64) / this.charWidth) - 2);
    const changed = cols !== this.cols;
    this.cols = cols;
    return changed;
  }

  /** Lays out every token (keeping the token at the top of the view in place) and redraws. */
  private relayout(): void {
    if (!this.cols) this.measure();
    const anchorToken = this.layout ? this.firstVisibleToken() : 0;
    this.apply(layoutRows({ texts: this.stream.texts, cols: this.cols, showWhitespace: this.showWhitespace, ghosts: this.marks!.ghosts }));
    // Keep the same token at the top when the width or whitespace mode changes the wrapping.
    if (anchorToken > 0) this.scroller.scrollTop = this.layout!.tokenRow[anchorToken] * ROW_HEIGHT;
    this.restoreScroll();
    this.drawn = { first: -1, last: -1 };
    this.draw();
  }

  private apply(layout: Layout): void {
    this.layout = layout;
    let rows = layout.rowCount;
    if (!layout.complete) {
      // Until the full layout lands, size the scrollbar by extrapolating the rows laid out so far.
      let placed = 0;
      for (let i = layout.rowStart[rows] - 1; i >= 0 && placed === 0; i--) if (layout.items[i] >= 0) placed = layout.items[i] + 1;
      rows = Math.ceil((rows * this.stream.texts.length) / Math.max(1, placed));
    }
    this.spacer.style.height = `${rows * ROW_HEIGHT}px`;
  }

  /** The scroller's inner height (600 while it has none: a hidden tab). */
  private viewportHeight(): number {
    return this.scroller.clientHeight || 600;
  }

  /** Applies a saved scroll position once the view has a size (a hidden tab has none). */
  private restoreScroll(): void {
    if (this.pendingScroll === undefined || !this.scroller.clientHeight) return;
    this.scroller.scrollTop = this.pendingScroll;
    // While the panel still settles its size the view may be taller than it will be, and the browser stops short of
    // a position near the end: try again on the next resize, unless the user scrolled in between.
    if (this.scroller.scrollTop >= this.pendingScroll - 1) this.pendingScroll = undefined;
  }

  private firstVisibleToken(): number {
    const l = this.layout!;
    const row = Math.min(l.rowCount - 1, visibleRows(this.scroller.scrollTop, this.viewportHeight(), ROW_HEIGHT, l.rowCount).first);
    for (let i = l.rowStart[row]; i < l.rowStart[row + 1]; i++) if (l.items[i] >= 0) return l.items[i];
    return 0;
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Mounts the grid. Call after the element is in the document; `scrollTop` restores a saved position. */
  start(scrollTop = 0): void {
    this.measure();
    if (scrollTop) {
      this.pendingScroll = scrollTop;
      this.relayout();
      return;
    }
    // First screen first: lay out only the rows the viewport shows, draw them, then lay out the rest.
    this.apply(
      layoutRows({
        texts: this.stream.texts,
        cols: this.cols,
        showWhitespace: this.showWhitespace,
        ghosts: this.marks!.ghosts,
        maxRows: FIRST_ROWS,
      }),
    );
    this.draw();
    // A timer set inside an animation frame fires after that frame is painted: the full layout never delays it.
    if (!this.layout!.complete) requestAnimationFrame(() => setTimeout(() => this.relayout(), 0));
  }

  private draw(): void {
    const layout = this.layout;
    if (!layout) return;
    const { first, last } = visibleRows(this.scroller.scrollTop, this.viewportHeight(), ROW_HEIGHT, layout.rowCount);
    if (first === this.drawn.first && last === this.drawn.last) return;
    this.drawn = { first, last };
    const frag = document.createDocumentFragment();
    for (let r = first; r < last; r++) frag.appendChild(this.row(r));
    this.rowsEl.replaceChildren(frag);
  }

  private row(r: number): HTMLElement {
    const l = this.layout!;
    const m = this.marks!;
    const s = this.stream;
    const row = h('div', { class: 'row' });
    const gutter = h('span', { class: 'gutter' });
    row.appendChild(gutter);
    let worst = 0;
    let worstFinding = -1;
    for (let i = l.rowStart[r]; i < l.rowStart[r + 1]; i++) {
      const item = l.items[i];
      if (item < 0) {
        const ghost = m.ghosts[-1 - item];
        const f = this.findings[ghost.finding];
        const el = h(
          'span',
          {
            class: `ghost${this.flash?.ghost === -1 - item ? ' flash' : ''}`,
            'data-finding': ghost.finding,
            title: `${f.message}\n(click for the finding)`,
          },
          icon('debug-breakpoint-unsupported'),
          ghostText(ghost.label),
        );
        row.appendChild(el);
        if (3 > worst) (worst = 3), (worstFinding = ghost.finding);
        continue;
      }
      const kind = TOKEN_KINDS[s.kinds[item]] ?? 'ordinary';
      const segment = SEGMENT_KINDS[s.segments[item]] ?? 'none';
      const sev = m.severity[item];
      const text = s.texts[item];
      const cls = `tok k-${kind} s-${segment}${sev ? ` ${SEVERITY_CLASS[sev]}` : ''}${this.flash?.token === item ? ' flash' : ''}`;
      const fi = m.finding[item];
      const title =
        `#${item} · id ${s.ids[item]} · ${kind === 'marker-as-text' ? 'marker spelled as text' : kind}\n` +
        `bytes: ${utf8Hex(text) || '(none)'}\nsegment: ${segment}` +
        (fi >= 0 ? `\n${this.findings[fi].severity}: ${this.findings[fi].message}` : '');
      const chip = h('span', { class: cls, title, ...(fi >= 0 && { 'data-finding': fi }) }, displayText(text, this.showWhitespace));
      row.appendChild(chip);
      if (sev > worst) (worst = sev), (worstFinding = fi);
    }
    if (worst) {
      gutter.appendChild(icon(SEVERITY_ICON[worst], `sev-${SEVERITY_ICON[worst]}`));
      gutter.dataset.finding = String(worstFinding);
      gutter.title = this.findings[worstFinding]?.message ?? '';
    }
    return row;
  }
}

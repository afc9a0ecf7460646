/**
 * The Wire tab: a response's wire events, one page of WIRE_SHOWN at a time. The exchange snapshot brings the first
 * page, the count and the longest gap of all events; any other page is asked of the host (`wirePage`), which reads
 * it from the stored body. The tab says which events it shows and moves to the previous or next page, the start, the
 * end and the event after the longest gap. Event data is model output: it only ever becomes text nodes (dom.ts).
 */
import { append, h, icon } from './dom';
import { WIRE_SHOWN, type ExchangeView, type WireEventView, type WirePageView, type WebviewMessage } from './protocol';

const num = (n: number) => n.toLocaleString('en-US');
const ms = (n: number | undefined) => (n === undefined ? '' : n.toFixed(1));

export class WireTab {
  readonly element: HTMLElement = h('div', { class: 'doc wire-tab' });
  private x: ExchangeView | undefined;
  /** The page shown: its first event's index and its events. */
  private from = 0;
  private events: WireEventView[] = [];
  /** The latest request: an answer with another seq is stale and dropped. */
  private seq = 0;
  private loading: number | undefined;
  /** Why the page last asked for is not shown (the host's one line). */
  private problem: string | undefined;
  /** An event to scroll to and mark once its page is shown. */
  private target: number | undefined;
  /** Where to scroll once the page asked for is shown: its first row, its last (the end), or nowhere (a new snapshot). */
  private scroll: 'start' | 'end' | undefined;

  constructor(
    private readonly post: (m: WebviewMessage) => void,
    /** The page shown changed (the webview keeps it in its state across restarts). */
    private readonly shown: (from: number) => void,
  ) {}

  /** A new snapshot of the exchange: its first page at once; `from` asks again for the page shown before. */
  show(x: ExchangeView, from = 0): HTMLElement {
    this.x = x;
    this.from = 0;
    this.events = x.wire.events;
    this.loading = undefined;
    this.problem = undefined;
    this.seq++; // an answer still on its way belongs to the previous snapshot
    this.scroll = undefined;
    this.render();
    if (from > 0 && from < x.wire.eventCount && !x.live) this.go(from);
    return this.element;
  }

  /** Shows the page starting at `from` (clamped to the events there are); `target` is the event to scroll to and mark. */
  go(from: number, target?: number, scroll?: 'start' | 'end'): void {
    const x = this.x;
    if (!x) return;
    from = Math.max(0, Math.min(from, x.wire.eventCount - 1));
    this.target = target;
    this.scroll = scroll;
    this.problem = undefined;
    if (from === 0 || from === this.from) {
      // The first page came with the snapshot; the page shown needs no asking.
      if (from === 0) (this.events = x.wire.events), (this.from = 0);
      this.loading = undefined;
      this.seq++;
      this.render();
      this.shown(this.from);
      return;
    }
    this.loading = from;
    this.post({ type: 'wirePage', seq: ++this.seq, from });
    // Only the buttons change until the page is here: the rows shown stay, not built again.
    for (const where of ['top', 'bottom'] as const) this.element.querySelector(`.wire-nav-${where}`)?.replaceWith(this.nav(where));
    this.element.querySelector('.wire-problem')?.remove();
  }

  /** The host's answer to a `wirePage` request. */
  page(seq: number, page: WirePageView): void {
    if (seq !== this.seq || !this.x) return;
    this.loading = undefined;
    if (page.state === 'ok') {
      this.from = page.from;
      this.events = page.events;
      this.shown(page.from);
    } else this.problem = page.message ?? `The events from ${num(page.from + 1)} on cannot be shown (${page.state}).`;
    this.render();
  }

  private render(): void {
    const x = this.x!;
    const { eventCount, longestGapMs, longestGapAt, chunkCount } = x.wire;
    if (eventCount === 0) {
      this.element.replaceChildren(h('p', { class: 'notice' }, x.unavailable ?? 'No events.'));
      return;
    }
    const gapLink = () => {
      if (longestGapAt === undefined) return `${ms(longestGapMs)} ms`;
      const a = h(
        'a',
        { href: '#', class: 'wire-gap-link', title: `Show event ${num(longestGapAt + 1)}, the one after the longest gap` },
        `${ms(longestGapMs)} ms, before event ${num(longestGapAt + 1)}`,
      );
      a.addEventListener('click', (e) => {
        e.preventDefault();
        this.go(this.pageOf(longestGapAt), longestGapAt);
      });
      return a;
    };
    const rows = this.events.map((e, i) => {
      const at = this.from + i;
      const tr = h(
        'tr',
        { class: [e.comment ? 'comment' : '', at === this.target ? 'wire-target' : ''].join(' ').trim() || undefined, 'data-index': at },
        h('td', null, num(at + 1)),
        h('td', null, ms(e.t)),
        h('td', { class: e.gap !== undefined && (e.gap > 1000 || at === longestGapAt) ? 'slow' : undefined }, ms(e.gap)),
        h('td', null, e.comment ? ':' : (e.event ?? '')),
        h('td', null, h('code', null, e.data)),
      );
      return tr;
    });
    this.element.replaceChildren();
    append(this.element, [
      h(
        'p',
        { class: 'muted' },
        `${num(eventCount)} events in ${num(chunkCount)} network chunks; the longest gap between events was `,
        gapLink(),
        '.',
      ),
      this.nav('top'),
      this.problem ? h('p', { class: 'notice wire-problem' }, icon('warning'), this.problem) : null,
      // The rows scroll under the range and the buttons, which stay in view.
      h(
        'div',
        { class: 'wire-scroll' },
        h(
          'table',
          { class: 'wire' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', null, '#'),
              h('th', null, 't (ms)'),
              h('th', null, 'gap (ms)'),
              h('th', null, 'event'),
              h('th', null, 'data'),
            ),
          ),
          h('tbody', null, rows),
        ),
        eventCount > WIRE_SHOWN ? this.nav('bottom') : null,
      ),
    ]);
    if (this.loading !== undefined) return; // scrolled once the page is here
    const target = this.target === undefined ? undefined : this.element.querySelector(`tr[data-index="${this.target}"]`);
    const scroll = this.scroll;
    this.scroll = undefined;
    if (target) requestAnimationFrame(() => target.scrollIntoView({ block: 'center' }));
    else if (scroll === 'end')
      requestAnimationFrame(() => this.element.querySelector('tbody tr:last-child')?.scrollIntoView({ block: 'end' }));
    else if (scroll === 'start') this.element.querySelector('.wire-scroll')?.scrollTo({ top: 0 });
  }

  /** The page holding event `i`, as the pages from the start cut them. */
  private pageOf(i: number): number {
    return this.from <= i && i < this.from + this.events.length ? this.from : Math.floor(i / WIRE_SHOWN) * WIRE_SHOWN;
  }

  private nav(where: 'top' | 'bottom'): HTMLElement {
    const x = this.x!;
    const count = x.wire.eventCount;
    const last = Math.max(0, count - WIRE_SHOWN);
    const shownTo = this.from + this.events.length;
    const range = `Events ${num(this.events.length ? this.from + 1 : 0)}–${num(shownTo)} of ${num(count)}`;
    const paged = count > WIRE_SHOWN;
    // While streaming the host has only the stream so far: the first page, refreshed with every snapshot.
    const still = x.live !== undefined;
    const busy = this.loading !== undefined;
    const button = (label: string, iconName: string, action: string, to: number, enabled: boolean, scroll: 'start' | 'end' = 'start') => {
      const b = h('vscode-button', { secondary: true, icon: iconName, 'data-action': action, disabled: !enabled || busy || still }, label);
      b.addEventListener('click', () => {
        if (!(b as unknown as { disabled: boolean }).disabled) this.go(to, undefined, scroll);
      });
      return b;
    };
    return h(
      'div',
      { class: `wire-nav wire-nav-${where}` },
      h('span', { class: 'wire-range' }, range),
      paged ? button('Start', 'arrow-up', 'start', 0, this.from > 0) : null,
      paged ? button('Previous', 'chevron-left', 'previous', Math.max(0, this.from - WIRE_SHOWN), this.from > 0) : null,
      paged ? button('Next', 'chevron-right', 'next', shownTo, shownTo < count) : null,
      paged ? button('End', 'arrow-down', 'end', last, shownTo < count, 'end') : null,
      busy
        ? h('span', { class: 'notice wire-loading' }, h('vscode-progress-ring'), `Reading events from ${num(this.loading! + 1)}…`)
        : null,
      paged && still && where === 'top'
        ? h('span', { class: 'muted' }, 'The stream is still going: the other pages open once it has finished.')
        : null,
    );
  }
}

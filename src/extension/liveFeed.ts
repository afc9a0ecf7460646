/**
 * The data side of an exchange panel, without `vscode` (the bench and tests drive it as the panel does): what each
 * panel posts to its webview, and the poller that follows open exchanges while they stream. A streaming exchange is
 * looked at every LIVE_POLL_MS; new bytes make a live snapshot (the exchange view at once, its tokens as soon as the
 * tokenizer is free: the newest snapshot, never a queue); the finished exchange replaces it in place.
 */
import type { ExchangeAnalysis } from '../core/analyze';
import type { CapturedExchange } from '../core/model';
import type { DownloadProgress } from '../core/tokens/hub';
import type { ExchangeView, HostMessage, LiveView, TokenizerNeededView, TokenStreamView } from '../../webview/protocol';
import { liveText, type LiveInfo } from './viewModel';

/**
 * How often an open streaming exchange is looked at while its tokenizer is idle. While a snapshot is tokenizing the
 * exchange is not looked at; it is looked at again the moment that snapshot's tokens are posted. So new bytes wait
 * for one tokenization at most, never for a queue, and a long stream costs one analysis per snapshot shown.
 */
export const LIVE_POLL_MS = 25;
/** Between snapshots, the banner's clock and silence are refreshed this often. */
const LIVE_CLOCK_MS = 500;
/**
 * While streaming, the whole exchange view (native text, every wire event: hundreds of kB on a long stream) is
 * posted at most this often; the tokens, which carry the findings too, go with every snapshot.
 */
const LIVE_VIEW_MS = 250;

/** What a panel shows of an exchange (exchanges.ts adds the raw document's URI). */
export interface OpenedCore {
  exchange: CapturedExchange;
  result?: ExchangeAnalysis;
  view: ExchangeView;
}

/** The tokens of an exchange, or why there are none (`needed`: the tokenizer is not on this machine). */
export interface TokensResult {
  stream?: TokenStreamView;
  reason?: string;
  needed?: TokenizerNeededView;
}

/** How to tokenize: `download` fetches a missing tokenizer from the Hub first (only when the user asked for it). */
export interface TokenJob {
  download?: boolean;
  onProgress?: (p: DownloadProgress) => void;
}

/** Tokens for an opened exchange, or why there are none. Tokenizing runs off the extension host's thread. */
export type TokenSource<O> = (o: O, job?: TokenJob) => Promise<TokensResult>;

export function liveView(l: LiveInfo): LiveView {
  return { ...l, text: liveText(l) };
}

/** The opened exchange with its live banner. */
export function withLive<O extends OpenedCore>(o: O, l: LiveInfo): O {
  return { ...o, view: { ...o.view, live: liveView(l) } };
}

/** A finding that only the end of a stream can make true: not shown while the stream is still going. */
const END_ONLY_RULES = new Set(['stream-unterminated']);

function withoutEndOnly<T extends { findings: { rule: string; severity: string }[] }>(v: T): T {
  return v.findings.some((f) => END_ONLY_RULES.has(f.rule)) ? { ...v, findings: v.findings.filter((f) => !END_ONLY_RULES.has(f.rule)) } : v;
}

/** The exchange view of a stream in flight: without end-only findings, and its worst severity from those left. */
function liveExchange(v: ExchangeView): ExchangeView {
  const view = withoutEndOnly(v);
  const worst = (['error', 'warning', 'info'] as const).find((sev) => view.findings.some((f) => f.severity === sev));
  return { ...view, worst };
}

export interface FeedHost {
  post(m: HostMessage): PromiseLike<boolean>;
  /** A live snapshot's tokens were posted and the tokenizer is free: look for new bytes now. */
  free?(): void;
  title(t: string): void;
  error(message: string, e: Error): void;
}

/** What one panel has posted and is posting: full snapshots, live snapshots, the banner's clock. */
export class PanelFeed<O extends OpenedCore> {
  private tokens: Promise<TokensResult>;
  /** The tokens last posted (or being made): a download that fails keeps its `needed` and adds the error. */
  private last: TokensResult | undefined;
  private downloading = false;
  /** Response bytes in the last live snapshot, and when the banner's clock was last sent. */
  liveBytes = -1;
  liveClockAt = 0;
  private viewPostedAt = -Infinity;
  private tokenizing = false;
  private pendingLive = false;
  /** Bumped by a full update: a live tokenization started before it must not post over it. */
  private generation = 0;

  constructor(
    public opened: O,
    private readonly tokenSource: TokenSource<O>,
    private readonly host: FeedHost,
  ) {
    this.tokens = this.tokenize();
  }

  private tokenize(job?: TokenJob): Promise<TokensResult> {
    return this.tokenSource(this.opened, job)
      .catch((e: Error) => {
        this.host.error(`tokenizing ${this.opened.exchange.id} failed`, e);
        return { reason: `Tokenizing failed: ${e.message.split('\n')[0]}` };
      })
      .then((r) => (this.last = r));
  }

  /** The tokenizer is missing (the last tokens said `needed`). */
  get needsTokenizer(): boolean {
    return !!this.last?.needed;
  }

  /** Tokenizes again and posts the tokens (a tokenizer arrived: a folder was chosen, another panel downloaded it). */
  async retokenize(job?: TokenJob): Promise<TokensResult> {
    this.generation++;
    this.pendingLive = false;
    const before = this.last?.needed;
    this.tokens = this.tokenize(job);
    let t = await this.tokens;
    // A download that failed (the Hub unreachable, no such repo): the offer stays, with why it failed.
    if (!t.stream && !t.needed && before) t = this.last = { ...t, needed: { ...before, error: t.reason } };
    await this.host.post({ type: 'tokens', ...t, ...(this.streaming && t.stream && { stream: withoutEndOnly(t.stream) }) });
    return t;
  }

  /** Getting the missing tokenizer failed before any tokenizing (a folder without tokenizer files): say why beside the offer. */
  async tokenizerError(error: string): Promise<void> {
    const t = this.last;
    if (!t?.needed) return;
    this.last = { ...t, needed: { ...t.needed, error } };
    this.tokens = Promise.resolve(this.last);
    await this.host.post({ type: 'tokens', ...this.last });
  }

  /** The user asked to download the missing tokenizer: once at a time, progress to the webview. True when it worked. */
  async download(): Promise<boolean> {
    if (this.downloading) return false;
    this.downloading = true;
    try {
      const t = await this.retokenize({
        download: true,
        onProgress: (p) =>
          void this.host.post({ type: 'tokenizerProgress', progress: { file: p.file, received: p.received, total: p.total } }),
      });
      return !!t.stream;
    } finally {
      this.downloading = false;
    }
  }

  get streaming(): boolean {
    return this.opened.exchange.state === 'streaming';
  }

  /** A live snapshot is being tokenized. */
  get busy(): boolean {
    return this.tokenizing;
  }

  update(opened: O): void {
    this.generation++;
    this.pendingLive = false;
    this.opened = opened;
    this.host.title(opened.view.title);
    this.tokens = this.tokenize();
    void this.sendSnapshot();
  }

  /** The stream so far: the exchange view at once, its tokens as soon as the tokenizer is free. */
  liveUpdate(opened: O): void {
    this.opened = opened;
    this.host.title(opened.view.title);
    this.liveClockAt = Date.now();
    if (performance.now() - this.viewPostedAt >= LIVE_VIEW_MS) {
      this.viewPostedAt = performance.now();
      void this.host.post({ type: 'exchange', exchange: liveExchange(opened.view) });
    }
    if (this.tokenizing) {
      this.pendingLive = true;
      return;
    }
    this.tokenizing = true;
    const generation = this.generation;
    const run = async (): Promise<void> => {
      const t = this.tokenize();
      this.tokens = t;
      const result = await t;
      if (generation !== this.generation) return void (this.tokenizing = false);
      await this.host.post({ type: 'tokens', ...result, ...(result.stream && { stream: withoutEndOnly(result.stream) }) });
      if (this.pendingLive) {
        this.pendingLive = false;
        return run();
      }
      this.tokenizing = false;
      this.host.free?.();
    };
    void run();
  }

  /** The banner's clock and silence, between snapshots. */
  clock(l: LiveInfo): void {
    this.liveClockAt = Date.now();
    void this.host.post({ type: 'live', live: liveView(l) });
  }

  async sendSnapshot(): Promise<void> {
    // A panel opened (or shown again) mid-stream gets the stream so far as live snapshots show it: no end-only finding.
    const live = this.streaming;
    const view = live ? liveExchange(this.opened.view) : this.opened.view;
    await this.host.post({ type: 'exchange', exchange: view });
    const t = await this.tokens;
    await this.host.post({ type: 'tokens', ...t, ...(live && t.stream && { stream: withoutEndOnly(t.stream) }) });
  }
}

export interface LiveSource<O> {
  /** A streaming exchange's bytes so far, age and silence; undefined once it has finished. */
  live(id: string): LiveInfo | undefined;
  /** The exchange as it is now, analysed. */
  open(id: string): Promise<O | undefined>;
}

/** Polls the feeds whose exchange is still streaming; stops when none is. */
export class LivePoller<O extends OpenedCore> {
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly feeds: () => Iterable<[string, PanelFeed<O>]>,
    private readonly source: LiveSource<O>,
    private readonly intervalMs = LIVE_POLL_MS,
  ) {}

  watch(): void {
    this.timer ??= setInterval(() => void this.poll(), this.intervalMs);
  }

  /** A feed's tokenizer is free again (its FeedHost.free): look at once, not at the next tick. */
  freed(): void {
    if (this.timer) void this.poll();
  }

  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      let streaming = false;
      for (const [id, p] of this.feeds()) {
        if (!p.streaming) continue;
        streaming = true;
        if (p.busy) continue; // looked at again when its tokens are posted (`free`)
        const l = this.source.live(id);
        if (!l) continue; // finished: the store's change event brings the final snapshot
        if (l.bytes !== p.liveBytes) {
          p.liveBytes = l.bytes;
          const opened = await this.source.open(id);
          if (opened) p.liveUpdate(withLive(opened, l));
        } else if (Date.now() - p.liveClockAt >= LIVE_CLOCK_MS) p.clock(l);
      }
      if (!streaming) this.dispose();
    } finally {
      this.polling = false;
    }
  }

  /** The exchange changed in the store: still streaming (the response head, an annotation), a live snapshot; finished, the finished exchange in place. */
  async changed(id: string, feed: PanelFeed<O>): Promise<void> {
    const opened = await this.source.open(id);
    if (!opened) return;
    const l = opened.exchange.state === 'streaming' ? this.source.live(id) : undefined;
    if (l) feed.liveUpdate(withLive(opened, l));
    else feed.update(opened);
    if (feed.streaming) this.watch();
  }

  dispose(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

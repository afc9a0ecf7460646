/**
 * Recording one exchange as it streams: its body file gets the request frame, then one frame per response chunk (or
 * per batch of chunks that arrived together), written synchronously before the proxy forwards them, so a killed
 * process loses nothing the client saw. Keys are masked to the same length on the way (./masking.ts); the bytes
 * forwarded to the client are never touched. Metadata goes to the store (./store.ts), which batches it into the
 * database off the forwarding path. After the end, keys split over SSE events are masked in place
 * (./split-keys-body.ts).
 */
import { close, closeSync } from 'node:fs';
import type { CapturedExchange } from '../model';
import { hasKeyHint, mayMaskAcross, maskSecrets, redactHeaders, type RedactOptions } from '../redact';
import { FRAME_HEADER, frameHeader } from './log';
import { MASK_CONTEXT, isKeyByte, MAX_TAIL, runStart } from './masking';
import { DeliveredFile, type DeliveredHost } from './delivered';
import { writeAt } from './files';
import { maskedNote, writeMasks, type FrameAt, type SplitKeysHost } from './split-keys-body';
import type { ExchangeAnnotations, ExchangeWriter } from './types';

/** What a writer needs from its store. */
export interface RecorderHost extends DeliveredHost, SplitKeysHost {
  /** Merges fields into the exchange, persists them (batched) and tells listeners. */
  patch(x: CapturedExchange, fields: Partial<CapturedExchange>): void;
  /** Opens the exchange's body file for writing; -1 when the disk refuses. */
  openBody(id: string): number;
  /** The same, off the event loop. */
  openBodyAsync(id: string): Promise<number>;
  /** Gives a spare body file its exchange's name; false when the disk refuses or the exchange was deleted meanwhile. */
  adoptSpare(spare: string, id: string): boolean;
  /**
   * Appends fields of the exchange to the store's journal (./journal.ts): one small synchronous write, or with `hold`
   * none yet (they go with the journal's next write, or `journalFlush`).
   */
  journal(id: string, fields: Partial<CapturedExchange>, hold?: boolean): void;
  /** Writes the journal's held fields. */
  journalFlush(): void;
  /** The exchange's end-of-stream work (masking split keys), which `idle` waits for. */
  settling(done: Promise<void>): void;
  /** The exchange ended and its file is closed. */
  finished(x: CapturedExchange): void;
  /**
   * The response ended: the row is written "complete" now, with these fields, while listeners still see the exchange
   * streaming until `finish` tells them the outcome.
   */
  persistEnded(x: CapturedExchange, fields: Pick<CapturedExchange, 'endedAt' | 'responseBytes'>): void;
}

/**
 * Writes one exchange as it streams. Response chunks are written with key-shaped strings masked to the same length
 * (redact.ts maskSecrets), so offsets and chunk timing stay exact; the bytes forwarded to the client are not touched.
 */
export class Writer implements ExchangeWriter {
  private fd = -1;
  /** The spare file this exchange writes to, until it is renamed to the exchange's own name. */
  private spare: string | undefined;
  /** The request body as received, until its frame is placed (it comes first in the file). */
  private request: Buffer | undefined;
  /** Masking and writing the request body, slice by slice (see writeRequest). */
  private requestWritten: Promise<void> | undefined;
  /** Where the response frames start in the body file (after the request frame). */
  private responseStart = 0;
  /** Where the next frame goes in the file (positioned writes: masks are patched in place). */
  private pos = 0;
  private offset = 0;
  /**
   * The end of the response from response offset `start`: as received (`raw`) and as written (`written`, masked), with
   * the frames that hold it. The next chunk is scanned together with it, so a key cut by a chunk boundary is found whole.
   */
  private tail: Tail = emptyTail();
  /** While corked: the parts gathered for one write at `gatheredPos`, and the response offset before them. */
  private gathered: Uint8Array[] | undefined;
  private gatheredPos = 0;
  private gatheredOffset = 0;
  /** Set when the disk refused a write: the rest of this body is not kept, and the capture says so. */
  private diskFailed = false;
  private done = false;
  /** The bytes repair mode delivered instead of the upstream's, once it announced them (./delivered.ts). */
  private deliveredFile: DeliveredFile | undefined;
  /** Set when the delivered bytes turned out to be the upstream's: the copy is not kept. */
  private deliveredSame = false;
  /** Decoded response bytes received, kept or not (past maxBytes they only reach the client). */
  private received = 0;
  /** The response start's journal line waits (`responseStarted` with `hold`) until `uncork` or the end's line. */
  private held = false;

  constructor(
    private readonly store: RecorderHost,
    private readonly x: CapturedExchange,
    private readonly t0: number,
    private readonly redact: RedactOptions,
    request: Buffer | undefined,
    spare: { path: string; fd: number } | undefined,
    private readonly maxBytes: number,
  ) {
    this.request = request;
    if (spare) {
      this.fd = spare.fd;
      this.spare = spare.path;
    } else {
      // No spare left (many exchanges at once): create the file while the upstream thinks, and place the request
      // frame as soon as it exists (a process killed before the response still leaves the request body). Should the
      // first chunk come sooner, chunk() opens it itself and the late descriptor is closed unused.
      void store.openBodyAsync(x.id).then((fd) => {
        if (fd < 0) return;
        if (this.fd >= 0 || this.done) return close(fd, () => undefined);
        this.fd = fd;
        this.ready(false);
      });
    }
    // The request went upstream before `begin` (the proxy calls it a turn of the loop later): the file is named and
    // the request frame placed now, while the upstream thinks, so the first response bytes find them ready.
    this.ready(false);
  }

  get id(): string {
    return this.x.id;
  }

  responseStarted(status: number, headers: Record<string, string | string[] | undefined>, ttfbMs?: number, hold = false): void {
    if (this.done) return;
    const ttfb = ttfbMs ?? round(performance.now() - this.t0);
    // The journal has the status before any response byte is on disk (with `hold`: before the client sees one, in the
    // write of the end's line when the whole response came in one read); the row follows in the store's next batch.
    this.store.journal(this.x.id, { status, ttfbMs: ttfb }, hold);
    this.held = hold;
    this.store.patch(this.x, { status, responseHeaders: redactHeaders(headers, this.redact), ttfbMs: ttfb });
  }

  /**
   * Masks and writes one chunk. Scanned with the tail of what came before, a key cut by the chunk boundary is found
   * whole and its part already on disk is patched in place. What remains: until the next chunk arrives (for good, if
   * the process dies first), the start of a key too short to look like one yet is on disk as it came.
   */
  chunk(bytes: Uint8Array, at?: number): void {
    if (this.done || this.diskFailed || bytes.length === 0) return;
    this.received += bytes.length;
    // Past the cap nothing more is kept (2 MB of gzip can inflate to gigabytes); `finish` records the cut.
    const room = this.maxBytes - this.offset;
    if (room <= 0) return;
    if (bytes.length > room) bytes = bytes.subarray(0, room);
    const t = at ?? performance.now() - this.t0;
    // The exchange's journal line precedes its body file (begin): a crash before its row is written still lists it.
    if (!this.ready(true)) return;
    const { raw } = this.tail;
    // The usual case: nothing in the tail and this chunk can be masked (no key hint in them, none across the seam), so
    // the bytes are written as they came, with no copy and no scan of the whole tail.
    if (!this.redact.patterns?.length && !mayMaskAcross(raw, this.tail.hinted, bytes)) {
      const out = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const frame = { offset: this.offset, pos: this.pos + FRAME_HEADER, length: out.length };
      if (!this.write([frameHeader('R', out.length, t), out])) return;
      this.offset += out.length;
      return this.keepTail(undefined, out, frame);
    }
    const all = Buffer.concat([raw, bytes]);
    const masked = maskSecrets(all, this.redact);
    // A patch lands in frames already on disk: gathered ones go first.
    if (masked !== all && raw.length > 0 && !(this.writeGathered() && this.patchTail(masked.subarray(0, raw.length)))) return;
    const out = masked.subarray(raw.length);
    const frame = { offset: this.offset, pos: this.pos + FRAME_HEADER, length: out.length };
    // One frame, one syscall: the bytes and their arrival time reach the kernel together.
    if (!this.write([frameHeader('R', out.length, t), out])) return;
    this.offset += out.length;
    this.keepTail(all, out, frame);
  }

  cork(): void {
    this.gathered ??= [];
  }

  uncork(): void {
    this.writeGathered();
    this.gathered = undefined;
    this.held = false;
    this.store.journalFlush();
  }

  annotate(fields: ExchangeAnnotations): void {
    if (!this.done) this.store.patch(this.x, fields);
  }

  ended(): void {
    if (this.done || this.diskFailed) return this.uncork();
    // The frames first, then one journal write: the end's line, with the start's if it was held.
    this.writeGathered();
    this.gathered = undefined;
    this.held = false;
    this.store.persistEnded(this.x, { endedAt: Date.now(), responseBytes: this.offset });
  }

  delivering(): void {
    if (!this.done) this.deliveredFile ??= new DeliveredFile(this.store, this.x.id, this.redact);
  }

  deliver(bytes: Uint8Array): void {
    if (this.done) return;
    this.delivering();
    this.deliveredFile!.append(bytes);
  }

  deliveredUnchanged(): void {
    this.deliveredSame = true;
  }

  finish(opts: { error?: string; incomplete?: boolean; endedAt?: number } = {}): Promise<CapturedExchange> {
    if (this.done) return Promise.resolve({ ...this.x });
    // The store's close waits for this (a stopping process still masks and records what it has).
    const run = this.finishNow(opts);
    this.store.settling(run.then(() => undefined));
    return run;
  }

  private async finishNow(opts: { error?: string; incomplete?: boolean; endedAt?: number }): Promise<CapturedExchange> {
    if (this.request || this.spare) this.ready(true); // no response bytes came: the request body still gets stored
    this.uncork();
    this.done = true;
    await this.requestWritten;
    this.tail = emptyTail();
    const lost = this.diskFailed ? `the disk refused a write; only the first ${this.offset} bytes were kept` : undefined;
    const error = [opts.error, lost].filter(Boolean).join('; ') || undefined;
    const cut = !this.diskFailed && this.received > this.offset;
    // How it ended is recorded at once (a process killed from here on still leaves a truthful row).
    this.store.patch(this.x, {
      state: opts.incomplete || this.diskFailed ? 'incomplete' : error ? 'error' : 'complete',
      endedAt: opts.endedAt ?? Date.now(),
      responseBytes: this.offset,
      // `null` clears what an earlier state left (a reader's view of it mid-stream must never stick).
      error: (error ?? null) as string | undefined,
      ...(cut && { truncated: { keptBytes: this.offset, receivedBytes: this.received } }),
    });
    await this.settle(); // `finish` has told the store to wait for this run (see above)
    return { ...this.x };
  }

  /**
   * After the end, off the forwarding path (the client has every byte already) and in steps that yield to the event
   * loop: keys split over SSE events are masked in the body and the delivered copy, then the exchange is handed to
   * the store's `finished` (analysis reads the masked bytes).
   */
  private async settle(): Promise<void> {
    try {
      const inBody = this.fd < 0 || this.diskFailed || this.offset === 0 ? undefined : await this.store.findSplitKeys(this.x.id, 'cap', this.responseStart, this.pos, this.redact);
      if (inBody && this.fd >= 0) writeMasks(this.store, this.fd, inBody);
      const inDelivered = await this.deliveredFile?.finish(!this.deliveredSame);
      const masked = maskedNote(inBody, inDelivered);
      if (masked) this.store.patch(this.x, { masked });
    } finally {
      const fd = this.fd;
      if (fd >= 0) this.store.diskWrite(() => closeSync(fd));
      this.fd = -1;
      this.store.finished(this.x);
    }
  }

  /**
   * Gets the body file ready: open (with `create`, creating it now if no file is open yet), named after the exchange,
   * request frame written. True when response bytes can be written.
   */
  private ready(create: boolean): boolean {
    if (this.diskFailed) return false;
    if (this.fd < 0) {
      if (!create) return false;
      this.fd = this.store.openBody(this.x.id);
      if (this.fd < 0) return !(this.diskFailed = true);
    }
    if (this.spare !== undefined) {
      const ok = this.store.adoptSpare(this.spare, this.x.id);
      this.spare = undefined;
      if (!ok) return !(this.diskFailed = true);
    }
    const q = this.request;
    this.request = undefined;
    if (!q) return true;
    // The request frame's place is taken now, at its final length (keys are masked to the same length); its bytes
    // follow slice by slice, so a large body never holds up the response or other exchanges.
    if (this.store.diskWrite(() => writeAt(this.fd, [frameHeader('Q', q.length, 0)], this.pos)) === undefined) return !(this.diskFailed = true);
    const at = this.pos + FRAME_HEADER;
    this.pos = this.responseStart = at + q.length;
    this.requestWritten = this.writeRequest(q, at);
    return !this.diskFailed;
  }

  /**
   * Masks the request body to the same length and writes it at `at`, REQUEST_SLICE bytes per turn of the event loop
   * (the first slice at once). A slice ends where no key can go on into the next one (after a byte no key holds), and
   * is scanned with the MASK_CONTEXT bytes before it, so a key and what a pattern needs before it are found whole.
   */
  private async writeRequest(body: Buffer, at: number): Promise<void> {
    for (let from = 0; from < body.length; ) {
      if (from > 0) await new Promise((r) => setImmediate(r));
      if (this.diskFailed || this.fd < 0) return;
      let to = Math.min(body.length, from + REQUEST_SLICE);
      let cut = to;
      while (to < body.length && cut > from && isKeyByte(body[cut - 1]) && to - cut < MAX_TAIL) cut--;
      if (cut > from && !isKeyByte(body[cut - 1])) to = cut;
      const start = Math.max(0, from - MASK_CONTEXT);
      const masked = maskSecrets(body.subarray(start, to), this.redact);
      const fd = this.fd;
      if (this.store.diskWrite(() => writeAt(fd, [masked.subarray(from - start)], at + from)) === undefined) return void (this.diskFailed = true);
      from = to;
    }
  }

  /** Writes at the end of the file (gathers, while corked); false (and the rest of the body is lost) when the disk refuses. */
  private write(parts: Uint8Array[]): boolean {
    if (this.gathered) {
      if (this.gathered.length === 0) (this.gatheredPos = this.pos), (this.gatheredOffset = this.offset);
      for (const p of parts) (this.gathered.push(p), (this.pos += p.length));
      return true;
    }
    const n = this.store.diskWrite(() => writeAt(this.fd, parts, this.pos));
    if (n === undefined) return !(this.diskFailed = true);
    this.pos += n;
    return true;
  }

  /** Writes what was gathered while corked; on failure only the response bytes before it count as kept. */
  private writeGathered(): boolean {
    const parts = this.gathered;
    if (!parts?.length || this.diskFailed) return !this.diskFailed;
    this.gathered = [];
    if (this.store.diskWrite(() => writeAt(this.fd, parts, this.gatheredPos)) !== undefined) return true;
    this.offset = this.gatheredOffset;
    return !(this.diskFailed = true);
  }

  /** Rewrites the tail's bytes on disk where a new mask covers them (masks are only ever added). */
  private patchTail(masked: Uint8Array): boolean {
    const { start, raw, written, frames } = this.tail;
    let changed = false;
    for (let i = 0; i < raw.length; i++) {
      if (masked[i] !== raw[i] && masked[i] !== written[i]) {
        written[i] = masked[i];
        changed = true;
      }
    }
    for (const f of changed ? frames : []) {
      const from = Math.max(f.offset, start);
      const part = written.subarray(from - start, f.offset + f.length - start);
      if (this.store.diskWrite(() => writeAt(this.fd, [part], f.pos + from - f.offset)) === undefined) return !(this.diskFailed = true);
    }
    return true;
  }

  /**
   * Keeps what the next chunk must be scanned with: the run of key bytes at the end, and context before it. `all` is
   * the tail's bytes followed by this chunk's (undefined: `out`, the chunk as received, unmasked; it is joined to the
   * tail only when the kept part reaches back into it).
   */
  private keepTail(all: Buffer | undefined, out: Buffer, frame: FrameAt): void {
    const tail = this.tail;
    const quick = all === undefined;
    let cut: number;
    if (all === undefined) {
      // Within the chunk alone when the kept part starts inside it (a run that reaches its first byte may go on before).
      const run = runStart(out, out.length);
      const from = run > 0 ? run - MASK_CONTEXT : -1;
      const inChunk = from > 0 ? runStart(out, from) : 0;
      if (inChunk > 0) cut = tail.raw.length + inChunk;
      else (all = Buffer.concat([tail.raw, out])), (cut = runStart(all, Math.max(0, runStart(all, all.length) - MASK_CONTEXT)));
    } else cut = runStart(all, Math.max(0, runStart(all, all.length) - MASK_CONTEXT));
    const start = tail.start + cut;
    // `written` is a copy: it is patched in place and must never alias the bytes forwarded to the client or queued
    // for the disk. `raw` is only read: a view of `all` (this writer's own copy) or of the chunk is enough.
    const old = tail.written;
    const kept = all ? all.length - cut : out.length - (cut - tail.raw.length);
    const written = Buffer.allocUnsafe(kept);
    const fromOld = old.copy(written, 0, Math.min(cut, old.length));
    out.copy(written, fromOld, Math.max(0, cut - old.length));
    const { frames } = tail;
    frames.push(frame);
    let stale = 0;
    while (stale < frames.length && frames[stale].offset + frames[stale].length <= start) stale++;
    if (stale > 0) frames.splice(0, stale);
    tail.raw = all ? all.subarray(cut) : out.subarray(cut - tail.raw.length);
    tail.start = start;
    tail.written = written;
    // Whether the kept bytes hold a key hint: none can when this chunk went the quick way (neither it nor the tail did).
    tail.hinted = !quick && hasKeyHint(tail.raw);
  }
}

interface Tail {
  /** Response offset of `raw`'s first byte. */
  start: number;
  raw: Buffer;
  written: Buffer;
  frames: FrameAt[];
  /** `raw` holds a key hint (./redact.ts): the next chunk is scanned with it in full. */
  hinted: boolean;
}

function emptyTail(): Tail {
  return { start: 0, raw: Buffer.alloc(0), written: Buffer.alloc(0), frames: [], hinted: false };
}

/** Request bytes masked and written per turn of the event loop: a few ms of work at most. */
const REQUEST_SLICE = 128 * 1024;

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

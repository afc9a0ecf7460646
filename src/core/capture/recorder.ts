/**
 * Recording one exchange as it streams: its body file gets the request frame, then one frame per response chunk (or
 * per batch of chunks that arrived together), written synchronously before the proxy forwards them, so a killed
 * process loses nothing the client saw. The status and the end go in the same writes, as marks (./log.ts): before the
 * first byte only the body file is written. Keys are masked to the same length on the way (./masking.ts); the bytes
 * forwarded to the client are never touched. Metadata goes to the store (./store.ts), which batches it into the
 * database off the forwarding path. After the end, keys split over SSE events are masked in place
 * (./split-keys-body.ts).
 */
import { close, closeSync } from 'node:fs';
import type { CapturedExchange } from '../model';
import { mayMaskAcross, maskSecrets, redactHeaders, type RedactOptions } from '../redact';
import { END_MARK, FRAME_HEADER, frameHeader, startMark } from './log';
import { MASK_CONTEXT, isKeyByte, MAX_TAIL } from './masking';
import { MaskTail } from './mask-tail';
import { DeliveredFile, type DeliveredHost } from './delivered';
import { writeAt } from './files';
import { maskedNote, writeMasks, type SplitKeysHost } from './split-keys-body';
import type { ExchangeAnnotations, ExchangeWriter } from './types';

/** What a writer needs from its store. */
export interface RecorderHost extends DeliveredHost, SplitKeysHost {
  /** Merges fields into the exchange, persists them (batched) and tells listeners. */
  patch(x: CapturedExchange, fields: Partial<CapturedExchange>): void;
  /** Opens the exchange's body file for writing; -1 when the disk refuses. */
  openBody(id: string): number;
  /** The same, off the event loop. */
  openBodyAsync(id: string): Promise<number>;
  /**
   * Gives a spare body file its exchange's name; false when the disk refuses or the exchange was deleted meanwhile.
   * Until then the journal names the spare (a restart after a crash adopts it).
   */
  adoptSpare(spare: string, id: string): boolean;
  /**
   * Appends fields of the exchange to the store's journal (./journal.ts): one small synchronous write, or with `hold`
   * none yet (they go with the journal's next write; the exchange's row, once written, makes them unneeded).
   */
  journal(id: string, fields: Partial<CapturedExchange>, hold?: boolean): void;
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
  /** The end of the response written so far: the next chunk is scanned with it (./mask-tail.ts). */
  private tail = new MaskTail();
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
  /** The status's mark, until it is written with the first response bytes (or alone, at `uncork`). */
  private mark: Buffer | undefined;
  /** The response start's journal line and row fields, while they wait for the first bytes to go out (`hold`). */
  private started: (() => void) | undefined;

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
      // The spare gets the exchange's name on the next turn of the loop: after the first bytes and their write to the
      // client when the upstream answered that fast, else while it thinks. Its bytes are safe meanwhile (the journal
      // names the spare).
      setImmediate(() => this.adopt());
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
    // The request went upstream before `begin` (the proxy calls it a turn of the loop later): the request frame is
    // placed now, while the upstream thinks, so the first response bytes find the file ready.
    this.ready(false);
  }

  get id(): string {
    return this.x.id;
  }

  responseStarted(status: number, headers: Record<string, string | string[] | undefined>, ttfbMs?: number, hold = false): void {
    if (this.done) return;
    const ttfb = ttfbMs ?? round(performance.now() - this.t0);
    // The body file gets the status as a mark, in the write of the first response bytes, before the client sees any.
    // The journal line (with `hold`: joining the journal's next write) and the row's next batch add the exact time.
    if (Number.isInteger(status) && status >= 100 && status <= 999) this.mark = startMark(status);
    this.started = () => {
      this.store.journal(this.x.id, { status, ttfbMs: ttfb }, hold);
      this.store.patch(this.x, { status, responseHeaders: redactHeaders(headers, this.redact), ttfbMs: ttfb });
    };
    // Held, the rest waits for the client's first bytes: redacting the headers and the row's fields are work the first
    // byte need not wait for (the mark holds the status).
    if (hold) setImmediate(() => this.recordStart());
    else this.recordStart();
  }

  private recordStart(): void {
    const started = this.started;
    this.started = undefined;
    if (started && !this.done) started();
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
      const frame = { offset: this.offset, pos: this.pos + this.markLength() + FRAME_HEADER, length: out.length };
      if (!this.write(this.withMark([frameHeader('R', out.length, t), out]))) return;
      this.offset += out.length;
      return this.tail.keep(undefined, out, frame);
    }
    const all = Buffer.concat([raw, bytes]);
    const masked = maskSecrets(all, this.redact);
    // A patch lands in frames already on disk: gathered ones go first.
    if (masked !== all && raw.length > 0 && !(this.writeGathered() && this.patchTail(masked.subarray(0, raw.length)))) return;
    const out = masked.subarray(raw.length);
    const frame = { offset: this.offset, pos: this.pos + this.markLength() + FRAME_HEADER, length: out.length };
    // One frame, one syscall: the bytes and their arrival time reach the kernel together.
    if (!this.write(this.withMark([frameHeader('R', out.length, t), out]))) return;
    this.offset += out.length;
    this.tail.keep(all, out, frame);
  }

  cork(): void {
    this.gathered ??= [];
  }

  uncork(): void {
    // The client may see the head now: a status no bytes carried yet is written alone.
    if (this.mark && !this.done && this.ready(true)) this.write(this.withMark([]));
    this.writeGathered();
    this.gathered = undefined;
  }

  annotate(fields: ExchangeAnnotations): void {
    if (!this.done) this.store.patch(this.x, fields);
  }

  ended(): void {
    if (this.done || this.diskFailed || !this.ready(true)) return this.uncork();
    // The end's mark joins the frames gathered in this read (one write); the journal's line of it waits for its next
    // write, as the row waits for the store's next batch.
    this.cork();
    this.write(this.withMark([END_MARK]));
    this.uncork();
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
    this.recordStart();
    if (this.request || this.spare) this.ready(true); // no response bytes came: the request body still gets stored
    this.uncork();
    this.adopt();
    this.done = true;
    await this.requestWritten;
    this.tail = new MaskTail();
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
      const inBody =
        this.fd < 0 || this.diskFailed || this.offset === 0
          ? undefined
          : await this.store.findSplitKeys(this.x.id, 'cap', this.responseStart, this.pos, this.redact);
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
   * Gets the body file ready: open (with `create`, creating it now if no file is open yet), request frame placed. True
   * when response bytes can be written.
   */
  private ready(create: boolean): boolean {
    if (this.diskFailed) return false;
    if (this.fd < 0) {
      if (!create) return false;
      this.fd = this.store.openBody(this.x.id);
      if (this.fd < 0) return !(this.diskFailed = true);
    }
    const q = this.request;
    this.request = undefined;
    if (!q) return true;
    // The request frame's place is taken now, at its final length (keys are masked to the same length): its header goes
    // with the first slice, the other slices follow one per turn of the loop, so a large body never holds up the
    // response or other exchanges.
    const at = this.pos + FRAME_HEADER;
    this.pos = this.responseStart = at + q.length;
    this.requestWritten = this.writeRequest(q, at, frameHeader('Q', q.length, 0));
    return !this.diskFailed;
  }

  /** Gives the spare file the exchange's name (once); a refusal ends the recording of the body. */
  private adopt(): void {
    const spare = this.spare;
    if (spare === undefined) return;
    this.spare = undefined;
    if (!this.store.adoptSpare(spare, this.x.id)) this.diskFailed = true;
  }

  /** `parts`, after the status's mark if it is not written yet (it goes before the next frame, once). */
  private withMark(parts: Uint8Array[]): Uint8Array[] {
    if (this.mark) parts.unshift(this.mark);
    this.mark = undefined;
    return parts;
  }

  private markLength(): number {
    return this.mark ? FRAME_HEADER : 0;
  }

  /**
   * Masks the request body to the same length and writes it at `at`, REQUEST_SLICE bytes per turn of the event loop
   * (the first slice at once). A slice ends where no key can go on into the next one (after a byte no key holds), and
   * is scanned with the MASK_CONTEXT bytes before it, so a key and what a pattern needs before it are found whole.
   * The frame's `header` goes with the first slice, in the same write (synchronously: before this returns).
   */
  private async writeRequest(body: Buffer, at: number, header: Buffer): Promise<void> {
    if (body.length === 0 && this.store.diskWrite(() => writeAt(this.fd, [header], at - FRAME_HEADER)) === undefined)
      this.diskFailed = true;
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
      const parts = from === 0 ? [header, masked] : [masked.subarray(from - start)];
      if (this.store.diskWrite(() => writeAt(fd, parts, from === 0 ? at - FRAME_HEADER : at + from)) === undefined)
        return void (this.diskFailed = true);
      from = to;
    }
  }

  /** Writes at the end of the file (gathers, while corked); false (and the rest of the body is lost) when the disk refuses. */
  private write(parts: Uint8Array[]): boolean {
    if (this.gathered) {
      if (this.gathered.length === 0) (this.gatheredPos = this.pos), (this.gatheredOffset = this.offset);
      for (const p of parts) this.gathered.push(p), (this.pos += p.length);
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
    for (const p of this.tail.patches(masked)) {
      if (this.store.diskWrite(() => writeAt(this.fd, [p.bytes], p.pos)) === undefined) return !(this.diskFailed = true);
    }
    return true;
  }
}

/** Request bytes masked and written per turn of the event loop: a few ms of work at most. */
const REQUEST_SLICE = 128 * 1024;

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

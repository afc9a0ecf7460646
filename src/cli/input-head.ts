/**
 * What the first bytes of an input file say before it is read whole, and reading it as text: shared by the CLI's
 * input reader (./input.ts) and its early read of a model-text file (./preread.ts), which must decide alike. No
 * imports beyond Node and a leaf of the wire layer: the early read loads this before the CLI's code.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { textFramed } from '../core/wire/framing';

/** Larger inputs are refused rather than exhausting memory: a response this size is not a chat turn. */
export const MAX_BYTES = 256 * 1024 * 1024;
/** How much of a file is read to tell what it is. */
export const HEAD_BYTES = 4096;

/** Whitespace only, or nothing at all. */
export function isBlank(bytes: Uint8Array): boolean {
  return bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d);
}

export function isGzip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** NUL bytes or many control characters in the first 4 KB (NUL-delimited SGLang chunks start with `{`). */
export function looksBinary(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, HEAD_BYTES);
  if (head[0] === 0x7b) return false;
  let control = 0;
  for (const b of head) {
    if (b === 0) return true;
    if (b < 0x09 || (b > 0x0d && b < 0x20)) control++;
  }
  return control > head.length / 10;
}

/**
 * A file whose first bytes (`head`, the whole file when `whole`) make it model text for `loadInput`: not blank,
 * binary or gzip, and framed as neither JSON nor SSE. (A bundle opens with `{`, so it is never one.)
 */
export function modelTextHead(head: Uint8Array, whole: boolean): boolean {
  return !isBlank(head) && !looksBinary(head) && !isGzip(head) && textFramed(head, whole) === true;
}

/**
 * A file's text, decoded as TextDecoder decodes it (invalid bytes as U+FFFD, a leading byte-order mark dropped).
 * Decoding holds the bytes beside the text; they are read into a resizable buffer that is shrunk to nothing right
 * after, so their memory is gone before anything else is allocated (a 20 MB file: 20 MB less at the next peak than
 * waiting for the garbage collector). Throws what reading the file throws.
 */
export function readTextFile(file: string): string {
  const fd = openSync(file, 'r');
  let text: string;
  try {
    const size = fstatSync(fd).size;
    const memory = new (
      ArrayBuffer as unknown as new (
        n: number,
        o: { maxByteLength: number },
      ) => ArrayBuffer & { resize(n: number): void }
    )(size, {
      maxByteLength: size,
    });
    const bytes = Buffer.from(memory);
    let n = 0;
    while (n < size) {
      const got = readSync(fd, bytes, n, size - n, n);
      if (got === 0) break;
      n += got;
    }
    // A file that grew since it was measured is read whole, as readFileSync reads it.
    if (n === size && readSync(fd, Buffer.alloc(1), 0, 1, n) > 0) text = readFileSync(file).toString('utf8');
    else text = bytes.toString('utf8', 0, n);
    memory.resize(0);
  } finally {
    closeSync(fd);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * A model-text file read before the CLI's code was loaded (src/cli/preread.ts), with what identified the file then.
 * Reading a large file decodes it while its bytes are held too; done first, that peak does not add to the memory the
 * CLI's code takes. It lives on `globalThis`: the early read and the CLI are separate bundles.
 */
export interface Preread {
  file: string;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  text: string;
}

const PREREAD = Symbol.for('tokenscope.preread');

export function stashPreread(p: Preread): void {
  (globalThis as Record<symbol, unknown>)[PREREAD] = p;
}

/** The early read, if any, taken: after this call nothing else holds it. */
export function takePreread(): Preread | undefined {
  const g = globalThis as Record<symbol, unknown>;
  const p = g[PREREAD] as Preread | undefined;
  delete g[PREREAD];
  return p;
}

/** The early read is of `file` as it is now (`st`: its stat): same path, same inode, size and modification time. */
export function sameFile(p: Preread, file: string, st: { dev: number; ino: number; size: number; mtimeMs: number }): boolean {
  return p.file === file && p.dev === st.dev && p.ino === st.ino && p.size === st.size && p.mtimeMs === st.mtimeMs;
}

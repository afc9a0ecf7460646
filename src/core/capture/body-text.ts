/**
 * Bodies in text formats (the repro bundle, HAR, the redaction guard). A body that is valid UTF-8 travels as text (readable, and the final redaction guard can
 * read it); anything else as base64. Decoding is strict and keeps a leading BOM, so text → bytes gives back the
 * exact bytes that were received.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** The UTF-8 text of the bytes, or undefined when they are not valid UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

export type BodyEncoding = 'utf8' | 'base64';

export function encodeBody(bytes: Uint8Array): { encoding: BodyEncoding; text: string } {
  const text = utf8Text(bytes);
  return text !== undefined ? { encoding: 'utf8', text } : { encoding: 'base64', text: Buffer.from(bytes).toString('base64') };
}

/** Strict base64 (RFC 4648 alphabet, optional padding); undefined when the text is not base64. */
export function base64Bytes(text: string): Uint8Array | undefined {
  const clean = text.replace(/\s+/g, '');
  if (clean.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) return undefined;
  return new Uint8Array(Buffer.from(clean, 'base64'));
}

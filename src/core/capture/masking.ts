/**
 * Masking of keys in stored response bodies, same length (so offsets and chunk timing stay exact): the chunk-boundary
 * helpers the recorder uses while bytes stream (./recorder.ts), and the pass over the decoded text when a stream ends
 * (./split-keys.ts).
 */

/**
 * Raw bytes kept before a run of key characters at the end of a response: room for what a pattern needs around a key
 * (`Bearer `, `"api_key": "`), and for a key cut just before the quote that ends it (`"api_key": "…\` | `"`).
 */
export const MASK_CONTEXT = 128;
/** The most raw bytes kept for masking; a longer run of key characters is no key. */
export const MAX_TAIL = 64 * 1024;

/** A byte that can be part of a key (the characters of redact.ts's key patterns): a run of them may go on in the next chunk. */
export function isKeyByte(b: number): boolean {
  return (
    (b >= 0x30 && b <= 0x39) ||
    (b >= 0x41 && b <= 0x5a) ||
    (b >= 0x61 && b <= 0x7a) ||
    b === 0x5f ||
    b === 0x2d ||
    b === 0x2e ||
    b === 0x2b ||
    b === 0x2f ||
    b === 0x3d ||
    b === 0x7e
  );
}

/** Where the run of key bytes ending at `end` starts (looking back at most MAX_TAIL bytes from the end of `bytes`). */
export function runStart(bytes: Uint8Array, end: number): number {
  let i = end;
  while (i > 0 && isKeyByte(bytes[i - 1]) && bytes.length - i < MAX_TAIL) i--;
  return i;
}

/** A stream id of the split-key pass (./split-keys.ts) in words: `chat:0:content` → `choice 0 content`. */
function streamWords(stream: string): string {
  const [api, ...rest] = stream.split(':');
  if (api === 'chat')
    return rest[1] === 'tool' ? `choice ${rest[0]} tool call ${rest[2]} arguments` : `choice ${rest[0]} ${rest[1].replace(/_/g, ' ')}`;
  if (api === 'anthropic') return `content block ${rest[0]} ${rest[1].replace(/_/g, ' ')}`;
  if (api === 'responses') return `${(rest[0] ?? '').replace(/^response\.|\.delta$/g, '').replace(/[._]/g, ' ')} (output ${rest[1]})`;
  return stream;
}

/**
 * The capture's `masked` note in one line, for `show` and the exchange view: how many keys the model streamed over
 * several SSE events were masked, of which kinds, and where (the stored response, repair mode's delivered copy).
 */
export function maskedSummary(m: { splitKeys: number; labels: string[]; where?: string[] }): string {
  const places = new Map<string, string[]>();
  for (const w of m.where ?? []) {
    const [file, stream] = [w.slice(0, w.indexOf(' ')), w.slice(w.indexOf(' ') + 1)];
    const name = file === 'delivered' ? 'the delivered copy' : 'the stored response';
    places.set(name, [...(places.get(name) ?? []), streamWords(stream)]);
  }
  const where = [...places].map(([file, streams]) => `${file} (${streams.join(', ')})`).join(' and ');
  const what = `${m.splitKeys} key${m.splitKeys === 1 ? '' : 's'} streamed over several events${m.labels.length ? ` (${m.labels.join(', ')})` : ''}`;
  return `${what} masked, same length, in ${where || 'the stored response'}`;
}

/**
 * How a body is framed, told from its first bytes: what `parseResponseBody` (./index.ts) and the CLI's early read of
 * a model-text file (src/cli/preread.ts) decide alike. No imports: the early read loads this before the CLI's code.
 */

const encoder = new TextEncoder();

/** The field names an SSE body opens with (after optional whitespace): `data:`, `event:`, `id:`, `retry:`, a comment. */
export const SSE_FIELDS = ['data:', 'event:', 'id:', 'retry:', ':'].map((f) => encoder.encode(f));

/**
 * Whether `parseResponseBody` frames a body that begins with `head` as plain text (neither JSON, SSE, NUL-delimited
 * chunks nor empty), whatever follows the head; undefined when the head cannot tell (it is blank, or ends too soon).
 * `whole`: the head is the entire body.
 */
export function textFramed(head: Uint8Array, whole: boolean, contentType?: string): boolean | undefined {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0a || head[i] === 0x0d)) i++;
  if (i === head.length) return whole ? false : undefined;
  if (head[i] === 0x7b /* { */ || head[i] === 0x5b /* [ */) return false;
  if (!whole && i + Math.max(...SSE_FIELDS.map((f) => f.length)) > head.length) return undefined;
  return !(SSE_FIELDS.some((f) => f.every((b, k) => head[i + k] === b)) || /text\/event-stream/i.test(contentType ?? ''));
}

/**
 * The server's own ids (SGLang `output_ids`, logprob tokens) as a token stream reads them: the text they spell, and
 * logprob tokens mapped to ids.
 */
import type { Tokenizer } from './types';

/** The text the ids spell (special tokens by name, invalid UTF-8 as U+FFFD), for parsing before `buildTokenStream`. */
export function decodeIds(tokenizer: Tokenizer, ids: readonly number[]): string {
  const decoder = new TextDecoder();
  let text = '';
  for (const id of ids) {
    const b = tokenizer.tokenBytes(id);
    if (b) text += decoder.decode(b, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * Maps logprob tokens (`{token, bytes?}`) to ids. Undefined unless every token maps to exactly one id: a partial
 * mapping would not be the server's stream.
 */
export function idsFromLogprobs(tokenizer: Tokenizer, tokens: readonly { token: string; bytes?: number[] }[]): number[] | undefined {
  const encoder = new TextEncoder();
  const ids: number[] = [];
  for (const t of tokens) {
    const special = tokenizer.specials.get(t.token);
    const id = special ?? tokenizer.idOfBytes(t.bytes ? Uint8Array.from(t.bytes) : encoder.encode(t.token));
    if (id === undefined) return undefined;
    ids.push(id);
  }
  return ids;
}

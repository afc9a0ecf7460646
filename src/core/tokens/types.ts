/** What Tokenscope needs from a tokenizer, whatever engine is behind it (tiktoken ranks or a tokenizer.json). */
export interface Tokenizer {
  /** Human name of what was loaded (`moonshotai/Kimi-K2-Instruct-0905 (tiktoken)`). */
  readonly name: string;
  /** Encodes text with every special-token string turned into its id (tiktoken `allowed_special="all"`). */
  encode(text: string): number[];
  /** Encodes text with special-token strings spelled out as ordinary tokens (tiktoken `encode_ordinary`). */
  encodeOrdinary(text: string): number[];
  /** The bytes of one token; for a special token, its name in UTF-8. Undefined for an id outside the vocabulary. */
  tokenBytes(id: number): Uint8Array | undefined;
  /** The name of a special (added) token, or undefined when `id` is an ordinary token. */
  specialName(id: number): string | undefined;
  /** Every special (added) token string with its id. */
  readonly specials: ReadonlyMap<string, number>;
  /** The id of the ordinary token whose bytes are exactly `bytes`, if there is one (maps logprob tokens to ids). */
  idOfBytes(bytes: Uint8Array): number | undefined;
}

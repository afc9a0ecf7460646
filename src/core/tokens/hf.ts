import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { UserError } from '../model';
import type { Tokenizer } from './types';
import { fsWhy } from '../fs-errors';

/**
 * Families that ship a `tokenizer.json` (DeepSeek V3, Qwen3, GLM, gpt-oss, MiniMax), through @huggingface/tokenizers.
 *
 * That library always splits added tokens out of the text, so "the marker spelled as ordinary text" needs a
 * second tokenizer built from the same data without its added tokens. It costs as much as the first one to
 * construct, so it is built only when a text that contains an added-token string must be encoded ordinarily.
 */

type TokenizerJson = Record<string, unknown> & { added_tokens?: { id: number; content: string }[] };

export interface HfLoadOptions {
  /** Parsed `tokenizer.json`. */
  json: TokenizerJson;
  /** Parsed `tokenizer_config.json` (optional in the repo; `{}` when absent). */
  config?: Record<string, unknown>;
  name: string;
}

export class HfJsonTokenizer implements Tokenizer {
  readonly name: string;
  readonly specials: ReadonlyMap<string, number>;
  private readonly full: HfTokenizer;
  private ordinary: HfTokenizer | undefined;
  private readonly json: TokenizerJson;
  private readonly config: Record<string, unknown>;
  private readonly specialById = new Map<number, string>();
  private readonly byteLevel: boolean;
  private readonly utf8 = new TextEncoder();

  constructor(o: HfLoadOptions) {
    this.name = o.name;
    this.json = o.json;
    // Decoding one token at a time must not rewrite " ." to "." (the library's default clean-up).
    this.config = { ...(o.config ?? {}), clean_up_tokenization_spaces: false };
    for (const k of ['model', 'decoder', 'post_processor', 'pre_tokenizer', 'normalizer']) {
      if (!(k in o.json)) throw new UserError(`${o.name}: tokenizer.json has no "${k}"`);
    }
    try {
      this.full = new HfTokenizer({ added_tokens: [], ...o.json }, this.config);
    } catch (e) {
      throw new UserError(`${o.name}: cannot load tokenizer.json: ${(e as Error).message}`);
    }
    const specials = new Map<string, number>();
    for (const [id, t] of this.full.get_added_tokens_decoder()) {
      specials.set(t.content, id);
      this.specialById.set(id, t.content);
    }
    this.specials = specials;
    this.byteLevel = usesByteLevel(o.json);
  }

  encode(text: string): number[] {
    return text ? this.full.encode(text, { add_special_tokens: false }).ids : [];
  }

  encodeOrdinary(text: string): number[] {
    if (!text) return [];
    let hasAdded = false;
    for (const s of this.specials.keys()) {
      if (text.includes(s)) {
        hasAdded = true;
        break;
      }
    }
    if (!hasAdded) return this.encode(text);
    this.ordinary ??= new HfTokenizer({ ...this.json, added_tokens: [] }, this.config);
    return this.ordinary.encode(text, { add_special_tokens: false }).ids;
  }

  tokenBytes(id: number): Uint8Array | undefined {
    const special = this.specialById.get(id);
    if (special !== undefined) return this.utf8.encode(special);
    const piece = this.full.id_to_token(id);
    if (piece === undefined) return undefined;
    if (this.byteLevel) {
      const bytes = byteLevelToBytes(piece);
      if (bytes) return bytes;
    }
    return this.utf8.encode(this.full.decode([id], { skip_special_tokens: false }));
  }

  specialName(id: number): string | undefined {
    return this.specialById.get(id);
  }

  idOfBytes(bytes: Uint8Array): number | undefined {
    const piece = this.byteLevel ? bytesToByteLevel(bytes) : new TextDecoder().decode(bytes);
    const id = this.full.token_to_id(piece);
    return id !== undefined && !this.specialById.has(id) ? id : undefined;
  }
}

/** Loads `tokenizer.json` (+ optional `tokenizer_config.json`) from a folder. */
export function loadHfTokenizer(dir: string, name: string): HfJsonTokenizer {
  const json = readJson(join(dir, 'tokenizer.json')) as TokenizerJson;
  let config: Record<string, unknown> = {};
  try {
    config = readJson(join(dir, 'tokenizer_config.json')) as Record<string, unknown>;
  } catch {
    // tokenizer_config.json is optional: tokenizer.json carries everything encoding needs.
  }
  return new HfJsonTokenizer({ json, config, name });
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${fsWhy(e)}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
}

function usesByteLevel(json: TokenizerJson): boolean {
  return JSON.stringify(json.decoder ?? null).includes('"ByteLevel"');
}

// GPT-2's byte ↔ printable-character table used by byte-level BPE vocabularies.
const BYTE_TO_CHAR: string[] = [];
const CHAR_TO_BYTE = new Map<string, number>();
{
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    const ch = String.fromCharCode(printable ? b : 256 + extra++);
    BYTE_TO_CHAR[b] = ch;
    CHAR_TO_BYTE.set(ch, b);
  }
}

function byteLevelToBytes(piece: string): Uint8Array | undefined {
  const out = new Uint8Array(piece.length);
  for (let i = 0; i < piece.length; i++) {
    const b = CHAR_TO_BYTE.get(piece[i]);
    if (b === undefined) return undefined;
    out[i] = b;
  }
  return out;
}

function bytesToByteLevel(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += BYTE_TO_CHAR[b];
  return s;
}

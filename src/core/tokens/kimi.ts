import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../model';
import { TiktokenBpe } from './bpe';
import { kimiPieceEnd } from './kimi-split';
import { loadRanks } from './rank-cache';
import { fsWhy } from '../fs-errors';

/**
 * Kimi K2 / K2.5 / K2.6: a tiktoken rank file (`tiktoken.model`), Moonshot's split pattern, and 256 special slots
 * right after the base vocabulary, named by `tokenizer_config.json` (unnamed slots are `<|reserved_token_{id}|>`).
 */

/** Special slots after the base vocabulary (`num_reserved_special_tokens` in Moonshot's tokenization_kimi.py). */
export const KIMI_SPECIAL_SLOTS = 256;

// Unicode White_Space, which is what `\s` means in tiktoken's regex engine. JS `\s` differs (it adds U+FEFF and
// lacks U+0085), so the pattern spells the set out.
const WS = String.raw`\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000`;
// `\p{Han}` is the Script property in tiktoken's engine (checked against it: with Script_Extensions, CJK
// punctuation such as 、 would join Han runs and ids would differ).
const HAN = String.raw`\p{Script=Han}`;
const UPPERISH = String.raw`[[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]--${HAN}]`;
const LOWERISH = String.raw`[[\p{Ll}\p{Lm}\p{Lo}\p{M}]--${HAN}]`;
// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` without inline flags; simple case folding also maps `s` to U+017F (ſ).
const CONTRACTION = String.raw`(?:'[sS\u017F]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?`;

/**
 * Moonshot's `pat_str`, in JS syntax (the encoder splits with ./kimi-split.ts, the same pieces by hand; this regex is
 * its reference) (`v` flag for the `&&[^\p{Han}]` class intersections, written as `--`).
 * Original:
 *   [\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *   |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *   |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 */
export const KIMI_PATTERN = new RegExp(
  [
    `${HAN}+`,
    String.raw`[^\r\n\p{L}\p{N}]?${UPPERISH}*${LOWERISH}+${CONTRACTION}`,
    String.raw`[^\r\n\p{L}\p{N}]?${UPPERISH}+${LOWERISH}*${CONTRACTION}`,
    String.raw`\p{N}{1,3}`,
    String.raw` ?[^${WS}\p{L}\p{N}]+[\r\n]*`,
    String.raw`[${WS}]*[\r\n]+`,
    `[${WS}]+(?![^${WS}])`,
    `[${WS}]+`,
  ].join('|'),
  'gv',
);

/** Moonshot's pattern in tiktoken's own syntax (for the tiktoken oracle in tests and the benchmark). */
export const KIMI_PAT_STR = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join('|');

/**
 * The special-token table: every slot `base .. base + 255`, named from `added_tokens_decoder`
 * (`{"163584": {"content": "[BOS]", …}}`) or `<|reserved_token_{id}|>`.
 */
export function kimiSpecials(baseVocab: number, tokenizerConfig: unknown): Map<string, number> {
  const named = new Map<number, string>();
  const decoder = (tokenizerConfig as { added_tokens_decoder?: Record<string, { content?: unknown }> } | undefined)?.added_tokens_decoder;
  for (const [k, v] of Object.entries(decoder ?? {})) {
    const id = Number(k);
    if (Number.isInteger(id) && typeof v?.content === 'string') named.set(id, v.content);
  }
  const specials = new Map<string, number>();
  for (let id = baseVocab; id < baseVocab + KIMI_SPECIAL_SLOTS; id++) {
    specials.set(named.get(id) ?? `<|reserved_token_${id}|>`, id);
  }
  return specials;
}

export interface KimiLoadOptions {
  /** Folder holding `tiktoken.model` and `tokenizer_config.json`. */
  dir: string;
  /** Where the compact rank cache lives; without it every load parses the rank file. */
  cacheDir?: string;
  name?: string;
  onWarning?: (message: string) => void;
}

/** Loads the Kimi tokenizer from a folder. Throws a UserError when a file is missing or malformed. */
export function loadKimiTokenizer(o: KimiLoadOptions): TiktokenBpe {
  const ranks = loadRanks(join(o.dir, 'tiktoken.model'), o.cacheDir, o.onWarning);
  let config: unknown;
  const configFile = join(o.dir, 'tokenizer_config.json');
  try {
    config = JSON.parse(readFileSync(configFile, 'utf8'));
  } catch (e) {
    throw new UserError(`cannot read ${configFile}: ${fsWhy(e)}`);
  }
  return new TiktokenBpe({
    name: o.name ?? 'Kimi K2 (tiktoken)',
    ranks,
    pattern: KIMI_PATTERN,
    split: kimiPieceEnd,
    specials: kimiSpecials(ranks.offsets.length - 1, config),
  });
}

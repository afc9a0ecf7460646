/**
 * A model family: everything Tokenscope knows about one way of writing tool calls, in one module. SGLang keeps one
 * short detector per format and one registry line; a Tokenscope family carries more, and every fact is required, so
 * a family missing one is a compile error rather than a silent default somewhere else:
 * - its grammar (`format`: render, parse, ranges, markers, model-id patterns, marker detection);
 * - what vLLM, SGLang and Dynamo do with its broken outputs (`verdicts`, per engine release, cited);
 * - where its tokenizer comes from (`tokenizer`);
 * - what repair mode needs (`repair`: the markers that open a leaked call, what a correct server strips, how the
 *   arguments are written);
 * - what the checks need beyond the grammar (`history`, `indexedCallIds`, `leaks`), each absent where it does not apply.
 * Code outside this folder asks a family for such a fact and never names a family id.
 */
import type { FamilyVerdicts } from './shared/verdicts';
import type { ModelFormat } from './shared/format';
import type { ParsedNative } from '../model';
import type { FamilyId } from './ids';

export interface RepairFacts {
  /**
   * Markers that can begin a stretch of tool-call markup in content or reasoning (closing markers alone never start
   * one). Repair holds streamed text back from the first character that could begin one of these.
   */
  openers: readonly string[];
  /** Markers a correct server removes from the channel although they open no call (Kimi K3's response wrappers). */
  stripped: readonly string[];
  /**
   * How the arguments are written, which decides when a call counts as whole:
   * - `json`: a JSON text; a cut inside it always shows (a JSON object only parses once its closing brace arrived);
   * - `tagged`: key/value markup (XML parameters, pythonic keywords) turned into JSON by the parser; a cut inside a
   *   value still gives valid JSON, so a call counts only when the parser saw it closed.
   */
  arguments: 'json' | 'tagged';
  /**
   * The id a repaired call is delivered with:
   * - `kimi`: `functions.NAME:IDX`, numbered across the conversation, keeping a well-formed one the model wrote;
   * - `written`: the id the model wrote for the call (Mistral's `[CALL_ID]`), else a stable digest;
   * - `digest`: `call_` + a digest of the turn and call (the grammar carries no ids).
   */
  callIds: 'kimi' | 'written' | 'digest';
}

export interface TokenizerFacts {
  /** The Hugging Face repo whose tokenizer the family's models use, when only the family is known. */
  repo: string;
  /**
   * The tokenizer Tokenscope ships for the family (no download): its folder under `tokenizers/` (files and licence)
   * and the Hub repos whose tokenizer it is, as `tokenizerRepo` spells them.
   */
  bundled?: { dir: string; repos: readonly string[] };
}

/**
 * Call ids written `functions.NAME:IDX`, IDX counting calls over the whole conversation, that the chat template renders
 * verbatim into the prompt, so an off-format id in the history pushes the model off its format (Kimi K2). The
 * `kimi-call-id` and `history-kimi-ids` rules check them.
 */
export interface IndexedCallIds {
  /**
   * What an id is: `canonical` (`functions.NAME:IDX`), `bare` (`NAME:IDX`), `malformed` (the model's broken attempt at
   * the format) or `foreign` (another server's `call_…`).
   */
  shape(id: string): { kind: 'canonical' | 'bare'; name: string; index: number } | { kind: 'malformed' | 'foreign' };
}

/** How the family's calls leak into content without a marker the marker scan can see (the `markerless-leak` rule). */
export interface LeakFacts {
  /** Its call lists open with no marker of their own (Llama 4 pythonic `[read(path="a.md")]`): a leak looks like plain text. */
  unmarked?: true;
  /**
   * Its markers are all special tokens, so a provider decoding with `skip_special_tokens` leaves calls as text without
   * them: how to read such calls back from a content segment.
   */
  stripped?: (text: string) => ParsedNative;
}

/**
 * What the family's servers demand of the history a request sends back (the `history-reasoning-missing` rule reads
 * it). With thinking on, every earlier assistant turn that made tool calls must carry its reasoning
 * (`reasoning_content`, a `thinking` block, a `reasoning` item), or the server answers 400.
 */
export interface HistoryFacts {
  reasoningWithToolCalls: 'required';
  /** The model ids (`modelKey`) it holds for, when the family also names models whose servers demand nothing. */
  models?: RegExp;
  /** Model ids (`modelKey`) that think unless the request turns thinking off. */
  thinksByDefault?: RegExp;
  /** Whose API answers so (`Moonshot AI`, `DeepSeek`), and its error, quoted in findings; `{index}` stands for the message's index. */
  api: string;
  error: string;
}

export interface Family<K extends FamilyId = FamilyId> {
  id: K;
  /** The grammar: render, parse, markers, model-id patterns and marker detection. */
  format: ModelFormat;
  /** What the serving engines do with each class of broken output. */
  verdicts: FamilyVerdicts;
  tokenizer: TokenizerFacts;
  repair: RepairFacts;
  /** What its servers demand of the history; absent when they are known to demand nothing of it. */
  history?: HistoryFacts;
  /** Set when its call ids are `functions.NAME:IDX` counted over the conversation. */
  indexedCallIds?: IndexedCallIds;
  /** Set when its calls can leak without a marker the scan sees. */
  leaks?: LeakFacts;
}

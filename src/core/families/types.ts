/**
 * A model family: everything Tokenscope knows about one way of writing tool calls, in one module. SGLang keeps one
 * short detector per format and one registry line; a Tokenscope family carries more, and every fact is required, so
 * a family missing one is a compile error rather than a silent default somewhere else:
 * - its grammar (`format`: render, parse, ranges, markers, model-id patterns, marker detection);
 * - what vLLM, SGLang and Dynamo do with its broken outputs (`verdicts`, per engine release, cited);
 * - where its tokenizer comes from (`tokenizer`);
 * - what repair mode needs (`repair`: the markers that open a leaked call, what a correct server strips, how the
 *   arguments are written).
 */
import type { FamilyVerdicts } from '../engines/types';
import type { ModelFormat } from '../formats/types';
import type { FamilyId } from '../model';

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
}

import type { AssistantMessage, FamilyId, NativeText, ParsedNative } from '../../model';

export interface RenderOptions {
  /**
   * False when the turn never reached its end (the stream was cut, or it finished with `length`, `error`, `abort`):
   * the end-of-turn marker is not written and the block the model was in when it stopped stays open (the
   * reasoning when nothing followed it, the last call and its section), so a reconstruction holds what arrived
   * and nothing the model did not send. Default true.
   */
  complete?: boolean;
}

/**
 * One model family's native tool-call format. One module per family implements it
 * (kimi-k2/grammar.ts, gpt-oss/grammar.ts, qwen3/grammar.ts…) and registers in index.ts.
 */
export interface ModelFormat {
  id: FamilyId;
  displayName: string;
  /** Every control-marker string of the family (special tokens that structure a turn). */
  markers: readonly string[];
  /** Markers that only belong to tool-call markup; their presence in content/reasoning/arguments is a leak. */
  toolMarkers: readonly string[];
  /** Markers the model writes inside its reasoning as part of it (Seed-OSS budget notes): no leak there. */
  reasoningMarkers?: readonly string[];
  /**
   * The special ids of the family's markers, when known: a placeholder for one of them (`<|reserved_token_163595|>`)
   * is read as that marker and reported (`marker-placeholder`).
   */
  markerIds?: Readonly<Record<number, string>>;
  /** Marker that ends the tool-call section (Kimi `<|tool_calls_section_end|>`), if the family has one. */
  sectionEnd?: string;
  /**
   * The family's calls can be told from text that holds none of its markers (Llama 3's bare JSON call, Llama 4's
   * `[read(path="a")]`). Other families are chosen from markers only when the text holds one of their own.
   */
  markerless?: boolean;
  /** True when a model id (`moonshotai/kimi-k2-0905`, `qwen/qwen3-coder`…) belongs to this family. */
  matchesModel(modelId: string): boolean;
  /** Score ≥ 0 for how strongly raw text carries this family's markers (0 = none). */
  detectText(text: string): number;
  /**
   * The text `render` opens with that the chat template's generation prompt already holds, so the model never emits
   * it (gpt-oss: `render` writes the first `<|start|>assistant` header in full, and the prompt ends with it). Token
   * ids of the turn as emitted leave it out (tokens/stream.ts `emittedIds`, the accounting).
   */
  generationPrompt?: string;
  /** Structured assistant message → the native text the model emitted, with segments. */
  render(message: AssistantMessage, opts?: RenderOptions): NativeText;
  /** Native text → segments and a structured message. Never throws; truncation is reported in `problems`. */
  parse(text: string): ParsedNative;
}

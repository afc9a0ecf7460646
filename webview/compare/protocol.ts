/**
 * The message protocol between the extension host (src/extension/compare/) and the provider-comparison webview
 * (webview/compare/main.ts). Both sides import this file.
 *
 * The host owns the comparison: it keeps every sample, recomputes the matrix (including trigger agreement against
 * the chosen reference provider) and posts a whole `snapshot` whenever something changes. The webview posts `ready`
 * each time it (re)starts and gets the latest snapshot, so hiding the panel loses nothing; it keeps only its own UI
 * state (selected samples, expanded error bodies) with setState. Every string that comes from a model or a provider
 * (error bodies, served-provider names, token texts) is rendered as text, never as markup.
 */
import type { Severity } from '../../src/core/model';
import { isNonEmptyString, messageGuard, type PanelErrorMessage, type ReadyMessage } from '../panel/protocol';

export type RunState = 'running' | 'done' | 'cancelled' | 'failed';

export interface CompareView {
  model: string;
  /** The capture the compared request came from. */
  sourceExchangeId?: string;
  /** Slug of the provider the others' tool-call triggers are compared with. */
  reference: string;
  state: RunState;
  /** Why the whole comparison failed (state `failed`), in one line. */
  error?: string;
  progress: { done: number; total: number; running: number; failed: number };
  samples: number;
  concurrency: number;
  /** Wall time once finished, e.g. `12.4 s`. */
  wall?: string;
  rows: RowView[];
}

export interface RowView {
  slug: string;
  /** Display name from OpenRouter's endpoint list (the slug when unknown). */
  name: string;
  isReference: boolean;
  /** From the endpoint list: `fp8 · $0.60/$2.50 per M · uptime 99.1%`; `down` when OpenRouter reports it degraded. */
  endpoint: { quantization?: string; price?: string; uptime?: string; context?: string; down: boolean };
  /**
   * Who really served the samples (never assumed from the pin). `verified`: every named sample was served by the
   * pinned provider; false: at least one was served by someone else (`mismatch`); undefined: nobody was named yet.
   */
  served: { names: string[]; verified?: boolean; mismatch: boolean };
  finishReasons: { reason: string; count: number }[];
  /** K2VV ToolCall-Trigger Similarity against the reference (F1, with precision/recall and counts in `detail`). */
  trigger: { text: string; detail: string; f1: number | null };
  /** K2VV ToolCall-Schema Accuracy. */
  schema: { text: string; detail: string; accuracy: number | null };
  /** Rule id → number of samples with at least one finding of it, most frequent first. */
  findings: { rule: string; count: number; severity: Severity }[];
  ttft: string;
  tokensPerSecond: string;
  cost: string;
  done: number;
  total: number;
  failed: number;
  /** One cell per planned sample, in sample order; unfinished samples are `pending`. */
  samples: SampleCellView[];
  /** What repair mode would have delivered over the samples (`3 of 3 samples: 3 calls delivered as tool_calls (read ×3)`). */
  repair?: string;
}

export interface SampleCellView {
  /** 0-based sample number (shown as #1, #2…). */
  sample: number;
  /**
   * `ok`: answered, and nothing that breaks an agent was found; `broken`: answered, but with an error finding or a tool
   * call that fails the schema; `failed`: no usable answer (an HTTP error, a stream cut off…).
   */
  state: 'pending' | 'ok' | 'broken' | 'failed' | 'cancelled';
  /** The recorded exchange (opens on click); absent when nothing could be recorded. */
  exchangeId?: string;
  finishReason?: string;
  status?: number;
  /** One-line reason a failed sample failed. */
  error?: string;
  /** The error response body as received (first 4 KB). */
  errorBody?: string;
  servedBy?: string;
  verified?: boolean;
  /** K2VV `tool_calls_valid` for a `tool_calls` finish. */
  toolCallsValid?: boolean;
  findings: number;
  worst?: Severity;
  ttft?: string;
  /** What repair mode would have delivered for this sample, in one line. */
  repair?: string;
  /** `fireworks #2`: how diff titles name this sample. */
  label: string;
}

/** A token of a diffed stream: id, text as it occurs, kind (index into TOKEN_KINDS) and segment (index into SEGMENT_KINDS). */
export interface DiffToken {
  id: number;
  text: string;
  kind: number;
  segment: number;
}

export type DiffHunk =
  | { kind: 'equal'; tokens: DiffToken[] }
  /** Identical tokens left out of the view (long equal runs keep a few tokens of context on each side). */
  | { kind: 'skip'; count: number }
  | {
      kind: 'change';
      left: DiffToken[];
      right: DiffToken[] /** Tokens left out of an overlong change, per side. */;
      omitted?: [number, number];
    };

export interface TokenDiffSide {
  label: string;
  exchangeId: string;
  tokenizer?: string;
  tokens: number;
  /** Why this side has no token stream. */
  reason?: string;
}

export interface TokenDiffView {
  left: TokenDiffSide;
  right: TokenDiffSide;
  hunks: DiffHunk[];
  /** Tokens the two streams share in the alignment, and tokens only on each side. */
  same: number;
  onlyLeft: number;
  onlyRight: number;
  /** Index of the first differing token (undefined: identical streams). */
  firstDifference?: number;
  /** Set when the streams differ too much for a token alignment: only the common start and end are aligned. */
  coarse?: boolean;
}

export type CompareHostMessage =
  | { type: 'snapshot'; view: CompareView }
  /** `pending`: tokenizing both sides; `diff` absent with `reason` when no token stream exists on either side. */
  | { type: 'tokenDiff'; pending?: boolean; diff?: TokenDiffView; reason?: string }
  | PanelErrorMessage;

export type DiffKind = 'raw' | 'wire' | 'tokens';

export type CompareWebviewMessage =
  | ReadyMessage
  | { type: 'openExchange'; id: string }
  | { type: 'setReference'; slug: string }
  /** Two samples side by side: `raw` native text and `wire` SSE bytes in VS Code's diff editor, `tokens` in this view. */
  | { type: 'diff'; kind: DiffKind; left: string; right: string }
  | { type: 'cancel' };

const DIFF_KINDS: readonly string[] = ['raw', 'wire', 'tokens'] satisfies DiffKind[];

/** Messages from the webview are checked field by field: the host acts only on well-formed ones. */
export const isCompareWebviewMessage = messageGuard<CompareWebviewMessage>({
  ready: () => true,
  cancel: () => true,
  openExchange: (m) => isNonEmptyString(m.id),
  setReference: (m) => isNonEmptyString(m.slug),
  diff: (m) =>
    typeof m.kind === 'string' &&
    DIFF_KINDS.includes(m.kind) &&
    isNonEmptyString(m.left) &&
    isNonEmptyString(m.right) &&
    m.left !== m.right,
});

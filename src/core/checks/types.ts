import type { AssistantMessage, Finding, NativeText, NormalizedRequest, ParsedNative, ParsedResponse, Severity } from '../model';
import type { ModelFormat } from '../families/shared/format';

/** What every check sees. */
export interface CheckContext {
  /** The family's format module, when the family is known. */
  format?: ModelFormat;
  /** Normalized request, when given (tools and history checks need it). */
  request?: NormalizedRequest;
  /** The structured response from the wire; absent when the input is raw native text. */
  response?: ParsedResponse;
  /**
   * The turn as the agent receives it: the wire's structured message, the family parse of raw text, or (raw text of
   * no known family) the whole text as content.
   */
  message: AssistantMessage;
  /** The native text analysed (raw, or rendered from `response`) with segments. Finding ranges index into it. */
  native: NativeText & { source: 'raw' | 'rendered' };
  /** The family parse of the native text. For rendered text it is the parse of the reconstruction. */
  parsed?: ParsedNative;
  /** The prompt's length in tokens as Tokenscope renders it with the model's own chat template, when known. */
  promptTokens?: number;
}

/** One rule. One file per rule in src/core/checks/, registered in checks/index.ts. */
export interface Check {
  /** Stable id, kebab-case (`kimi-section-unclosed`, `args-invalid-json`…). Never renamed once shipped. */
  id: string;
  severity: Severity;
  /** Short title for lists. */
  title: string;
  /** One line: why this breaks agents. */
  why: string;
  run(ctx: CheckContext): Finding[];
}

import { analyze, type AnalyzeInput } from '../analyze';
import type { Analysis, NativeText, ParsedResponse, SegmentKind } from '../model';
import { buildTokenStream, decodeIds, idsFromLogprobs, type TokenStream } from './stream';
import type { Tokenizer } from './types';

export interface ExchangeTokensInput extends AnalyzeInput {
  tokenizer: Tokenizer;
  /** The exchange's analysis when the caller already has it (skips a second analysis for text sources). */
  analysis?: Analysis;
}

/**
 * The token stream of one exchange, from the best source available:
 * 1. the server's ids (SGLang `output_ids`, or logprob tokens that all map to ids): exact. The ids are decoded
 *    and that text analysed, so segments and findings index into what the ids spell;
 * 2. the structured response rendered by the family module and encoded: `reconstructed`;
 * 3. raw native text encoded: `text`.
 * Returns the analysis the stream's findings and segments come from.
 */
export function exchangeTokenStream(input: ExchangeTokensInput): { stream: TokenStream; analysis: Analysis } {
  const { tokenizer, response } = input;
  const ids =
    response?.outputIds && response.outputIds.length
      ? response.outputIds
      : response?.logprobTokens?.length
        ? idsFromLogprobs(tokenizer, response.logprobTokens)
        : undefined;
  if (ids) {
    const analysis = analyze({ ...input, nativeText: decodeIds(tokenizer, ids) });
    const stream = buildTokenStream({ tokenizer, native: analysis.native, ids, findings: analysis.findings, usage: response?.usage });
    return { stream, analysis };
  }
  const analysis = input.analysis ?? analyze(input);
  const rendered = analysis.native.source === 'rendered';
  const stream = buildTokenStream({
    tokenizer,
    native: rendered && response && !finished(response) ? reachedPart(analysis.native) : analysis.native,
    source: rendered ? 'reconstructed' : 'text',
    findings: analysis.findings,
    usage: response?.usage,
  });
  return { stream, analysis };
}

/** Finish reasons after which the model did not reach its end of turn. */
const CUT_SHORT = new Set(['length', 'error', 'abort']);

/** Whether the model ended its turn: the response is complete and says it stopped on its own. */
function finished(r: ParsedResponse): boolean {
  return r.terminated && r.finishReason !== undefined && !CUT_SHORT.has(r.finishReason);
}

/** Segments holding what the model wrote; the markers around them are the family renderer's. */
const WRITTEN: ReadonlySet<SegmentKind> = new Set(['reasoning', 'content', 'arguments']);

/**
 * The part of a rendered turn the model reached. The family renderer closes every block it opens and ends the
 * turn (`</think>`, the call and section ends, `<|im_end|>`), but a response cut short (no terminal event, no
 * finish reason, `length`, `error`) never produced those: everything after the last text the model wrote is
 * dropped, and the segments are clipped to it, so the open blocks show as open.
 */
function reachedPart(native: NativeText): NativeText {
  let cut = 0;
  for (const s of native.segments) if (WRITTEN.has(s.kind)) cut = Math.max(cut, s.end);
  if (cut >= native.text.length) return native;
  return {
    text: native.text.slice(0, cut),
    segments: native.segments.filter((s) => s.start < cut || (s.start === cut && s.end === cut)).map((s) => (s.end > cut ? { ...s, end: cut } : s)),
  };
}

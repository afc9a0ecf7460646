import { analyze, type AnalyzeInput } from '../analyze';
import { getFormat } from '../families/index';
import { promptTokenFinding } from '../checks/prompt-token-mismatch';
import type { Analysis, Usage } from '../model';
import type { PromptAccounting } from './accounting';
import { buildTokenTable, decodeIds, idsFromLogprobs, type TokenStream } from './stream';
import { streamOf, type ColumnsBuilder, type TokenTable } from './table';
import type { Tokenizer } from './types';

export interface ExchangeTokensInput extends AnalyzeInput {
  tokenizer: Tokenizer;
  /**
   * The exchange's stored analysis (the capture store's analysis service): its findings and segments are used as
   * they are, so the token view and the Problems panel show the same ones. Absent: analysed here (a file on the
   * command line, no store).
   */
  analysis?: Analysis;
  /** Why the request has no prompt count (`promptTokens` absent), shown beside the accounting. */
  promptNote?: string;
  /** The prompt's ids (rendered with the model's template): a generation prompt the turn opens with is not counted. */
  promptIds?: readonly number[];
  /** Columns to build the table into (emptied first; see TokenStreamInput `columns`). */
  columns?: ColumnsBuilder;
}

/**
 * The token stream of one exchange, from the best source available:
 * 1. the server's ids (SGLang `output_ids`, or logprob tokens that all map to ids): exact. The ids are decoded
 *    and that text analysed, so segments and findings index into what the ids spell;
 * 2. the structured response rendered by the family module (as far as the model got) and encoded: `reconstructed`;
 * 3. raw native text encoded: `text`.
 * Returns the analysis the stream's findings and segments come from.
 */
export function exchangeTokenStream(input: ExchangeTokensInput): { stream: TokenStream; analysis: Analysis } {
  const { table, analysis } = exchangeTokenTable(input);
  return { stream: streamOf(table), analysis };
}

/** `exchangeTokenStream` with the tokens in columns (./table.ts): what `tokens` and the token view build. */
export function exchangeTokenTable(input: ExchangeTokensInput): { table: TokenTable; analysis: Analysis } {
  const out = completionStream(withPromptFinding(input));
  const a = out.table.accounting;
  if (input.promptTokens !== undefined) a.prompt = promptAccounting(input.promptTokens, input.response?.usage);
  else if (input.promptNote) a.promptNote = input.promptNote;
  return out;
}

function promptAccounting(counted: number, usage: Usage | undefined): PromptAccounting {
  const billed = usage?.promptTokens;
  const out: PromptAccounting = { counted, mismatch: promptTokenFinding(counted, usage) !== undefined };
  if (billed !== undefined) {
    out.billed = billed;
    out.delta = billed - counted;
  }
  return out;
}

/**
 * A given analysis gains the one finding only a tokenizer can make (the prompt count against the bill); a fresh
 * analysis runs that check itself from `promptTokens`.
 */
function withPromptFinding(input: ExchangeTokensInput): ExchangeTokensInput {
  const given = input.analysis;
  if (!given || input.promptTokens === undefined || given.findings.some((f) => f.rule === 'prompt-token-mismatch')) return input;
  const f = promptTokenFinding(input.promptTokens, input.response?.usage);
  return f ? { ...input, analysis: { ...given, findings: [...given.findings, f] } } : input;
}

function completionStream(input: ExchangeTokensInput): { table: TokenTable; analysis: Analysis } {
  const { tokenizer, response } = input;
  const ids =
    response?.outputIds && response.outputIds.length
      ? response.outputIds
      : response?.logprobTokens?.length
        ? idsFromLogprobs(tokenizer, response.logprobTokens)
        : undefined;
  if (ids) {
    // The given analysis when the ids spell its text; else the text they spell is analysed, so ranges index into it.
    const text = decodeIds(tokenizer, ids);
    const analysis = input.analysis && input.analysis.native.text === text ? input.analysis : analyze({ ...input, nativeText: text });
    const table = buildTokenTable({
      tokenizer,
      native: analysis.native,
      ids,
      findings: analysis.findings,
      usage: response?.usage,
      columns: input.columns,
    });
    return { table, analysis };
  }
  const analysis = input.analysis ?? analyze(input);
  // A turn cut short is already rendered only as far as the model got (analyze() renders with `complete: endedTurn`).
  const rendered = analysis.native.source === 'rendered';
  const table = buildTokenTable({
    tokenizer,
    native: analysis.native,
    source: rendered ? 'reconstructed' : 'text',
    findings: analysis.findings,
    usage: response?.usage,
    // The family's rendering may open with its generation prompt's text (gpt-oss): shown, not counted.
    generationPrompt: rendered && analysis.family ? getFormat(analysis.family).generationPrompt : undefined,
    promptIds: rendered ? input.promptIds : undefined,
    columns: input.columns,
  });
  return { table, analysis };
}

import type { Finding, Usage } from '../model';
import type { TokenSource } from './stream';

/**
 * Token accounting: the completion length Tokenscope counts vs what the provider billed.
 *
 * What is counted: every token of the completion, reasoning included, because that is what providers bill as
 * `usage.completion_tokens` (OpenRouter's `completion_tokens` includes `completion_tokens_details.reasoning_tokens`).
 * Server ids are counted as they are; a re-encoded turn counts each marker once, as the special token the model
 * emitted, even where the provider returned it spelled out as text. `countedReasoning` is the part of `counted`
 * in reasoning segments, counted the same way, so it is never more than `counted`.
 *
 * When it is a mismatch: a careful reconstruction lands within a few tokens of the bill (the turn's end token,
 * an opening `<think>` some templates put in the prompt, whitespace a provider trims; the healthy recordings
 * Tokenscope is tested on differ by 0 to 2 tokens), and within a fraction of a percent on long turns. A provider
 * that hides, strips or invents output is off by far more. So the difference is flagged when it exceeds BOTH
 * `ACCOUNTING_TOLERANCE.tokens` and `ACCOUNTING_TOLERANCE.ratio` of the billed count: the small absolute floor
 * keeps a short answer from being flagged over one or two structural tokens (yet 27 counted against 15 billed
 * is flagged), the ratio keeps a long one from being flagged over small re-encoding differences.
 */
export const ACCOUNTING_TOLERANCE = { tokens: 4, ratio: 0.05 } as const;

export const ACCOUNTING_RULE = 'token-accounting-mismatch';

export interface TokenAccounting {
  /** All completion tokens, reasoning included, as Tokenscope counts them (server ids, or the re-encoded turn with each marker one special token). */
  counted: number;
  /** Of which in reasoning segments (part of `counted`). */
  countedReasoning: number;
  /** `usage.completion_tokens` as billed, when reported. */
  billed?: number;
  /** Reasoning tokens as billed, when reported. */
  billedReasoning?: number;
  /** counted − billed. */
  delta?: number;
  /** True when the difference exceeds the tolerance (see ACCOUNTING_TOLERANCE). */
  mismatch: boolean;
  /** The warning to show when `mismatch` (rule `token-accounting-mismatch`). */
  finding?: Finding;
  /** The prompt side, when the request was rendered with the model's chat template (rule `prompt-token-mismatch`). */
  prompt?: PromptAccounting;
  /** Why there is no prompt side (no request, no chat template…), when a request was looked at. */
  promptNote?: string;
}

export interface PromptAccounting {
  /** Tokens of the prompt as the model's own chat template renders the request. */
  counted: number;
  /** `usage.prompt_tokens` as billed, when reported. */
  billed?: number;
  /** billed − counted. */
  delta?: number;
  /** True when the difference exceeds the rule's tolerance (checks/prompt-token-mismatch.ts). */
  mismatch: boolean;
}

export interface AccountingInput {
  source: TokenSource;
  counted: number;
  countedReasoning: number;
  /** Whether the turn carries any reasoning text at all. */
  hasReasoningText: boolean;
  usage?: Usage;
}

function exceeds(counted: number, billed: number): boolean {
  const diff = Math.abs(counted - billed);
  return diff > ACCOUNTING_TOLERANCE.tokens && diff > ACCOUNTING_TOLERANCE.ratio * billed;
}

export function accountTokens(a: AccountingInput): TokenAccounting {
  const out: TokenAccounting = { counted: a.counted, countedReasoning: a.countedReasoning, mismatch: false };
  const billed = a.usage?.completionTokens;
  const billedReasoning = a.usage?.reasoningTokens;
  if (billedReasoning !== undefined) out.billedReasoning = billedReasoning;
  if (billed === undefined) return out;
  out.billed = billed;
  out.delta = a.counted - billed;
  const what = a.source === 'server' ? 'the server returned' : 'the output re-encodes to';
  const parts: string[] = [];
  if (exceeds(a.counted, billed)) {
    const pct = billed ? ` (${out.delta > 0 ? '+' : ''}${Math.round((out.delta / billed) * 100)}%)` : '';
    parts.push(`the provider billed ${plural(billed, 'completion token')} but ${what} ${a.counted}${pct}`);
  }
  if (billedReasoning !== undefined && billedReasoning > 0 && exceeds(a.countedReasoning, billedReasoning)) {
    parts.push(
      a.hasReasoningText
        ? `${plural(billedReasoning, 'reasoning token')} billed, ${a.countedReasoning} in the reasoning returned`
        : `${plural(billedReasoning, 'reasoning token')} billed and no reasoning returned`,
    );
  }
  if (parts.length) {
    out.mismatch = true;
    out.finding = {
      rule: ACCOUNTING_RULE,
      severity: 'warning',
      message: `Token count mismatch: ${parts.join('; ')}. The provider may have hidden, stripped or invented output.`,
      location: 'usage',
    };
  }
  return out;
}

/** `1 completion token`, `2 completion tokens`. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

import type { Finding, Usage } from '../model';
import type { TokenSource } from './stream';

/**
 * Token accounting: the completion length Tokenscope counts vs what the provider billed.
 *
 * A careful reconstruction lands within a handful of tokens of the bill (the turn's end token, an opening
 * `<think>` some templates put in the prompt, whitespace a provider trims). A provider that hides, strips or
 * invents output is off by far more. So a mismatch is flagged when the difference exceeds BOTH
 * `ACCOUNTING_TOLERANCE.tokens` and `ACCOUNTING_TOLERANCE.ratio` of the billed count: the absolute floor keeps
 * short answers from being flagged over one or two structural tokens, the ratio keeps long ones from being
 * flagged over small re-encoding differences.
 */
export const ACCOUNTING_TOLERANCE = { tokens: 16, ratio: 0.1 } as const;

export const ACCOUNTING_RULE = 'token-accounting-mismatch';

export interface TokenAccounting {
  /** Completion tokens as Tokenscope counts them (server ids, or the re-encoded turn with markers as special tokens). */
  counted: number;
  /** Of which in reasoning segments. */
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
    parts.push(`the provider billed ${billed} completion tokens but ${what} ${a.counted}${pct}`);
  }
  if (billedReasoning !== undefined && billedReasoning > 0 && exceeds(a.countedReasoning, billedReasoning)) {
    parts.push(
      a.hasReasoningText
        ? `${billedReasoning} reasoning tokens billed, ${a.countedReasoning} in the reasoning returned`
        : `${billedReasoning} reasoning tokens billed and no reasoning returned`,
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

import type { Finding, Usage } from '../model';
import type { Check } from './types';

/**
 * The provider billed a prompt of a different length than the model's own chat template renders for the request.
 * A provider whose template differs from the model's feeds the model a different prompt (a known cause of broken
 * tool calls: tools declared in another layout, reasoning of earlier turns dropped or kept); Kimi's vendor verifier
 * tests exactly this. Tokenscope renders the request with the template that ships beside the tokenizer and counts it
 * (tokens/prompt.ts); this rule compares that count with `usage.prompt_tokens`.
 *
 * Tolerance: the difference is flagged when it exceeds BOTH `PROMPT_TOLERANCE.tokens` and `PROMPT_TOLERANCE.ratio`
 * of the local count. The floor absorbs a BOS token or a trailing newline a server adds or trims; the ratio keeps a
 * long prompt from being flagged over a few tokens. A provider-added system line (10+ tokens) on a short prompt, or a
 * re-laid-out tool declaration, is well past both.
 */
export const PROMPT_TOLERANCE = { tokens: 4, ratio: 0.01 } as const;

export const PROMPT_RULE = 'prompt-token-mismatch';

/** The finding for a locally counted prompt against the billed usage; undefined when they agree within tolerance. */
export function promptTokenFinding(counted: number, usage: Usage | undefined): Finding | undefined {
  const billed = usage?.promptTokens;
  if (billed === undefined) return undefined;
  const diff = billed - counted;
  if (Math.abs(diff) <= PROMPT_TOLERANCE.tokens || Math.abs(diff) <= PROMPT_TOLERANCE.ratio * counted) return undefined;
  const pct = counted ? ` (${diff > 0 ? '+' : ''}${Math.round((diff / counted) * 1000) / 10}%)` : '';
  const head = `The provider billed ${billed} prompt tokens, but the model's own chat template renders this request to ${counted}${pct}.`;
  const cached = usage?.cachedTokens ?? 0;
  let why: string;
  if (diff > 0) {
    why =
      'The provider fed the model a longer prompt: its chat template differs from the model’s, or it added text of its own ' +
      '(a system prompt, tool instructions). It may be legitimate (a provider’s safety or date line), but a different template is a known cause of broken tool calls.';
  } else if (cached > 0 && Math.abs(billed + cached - counted) <= Math.max(PROMPT_TOLERANCE.tokens, PROMPT_TOLERANCE.ratio * counted)) {
    why = `With the ${cached} cached tokens added it matches: the provider leaves cached tokens out of prompt_tokens (cache accounting), which is legitimate.`;
  } else {
    why =
      'The provider fed the model a shorter prompt: its template drops parts of the request (tools, earlier reasoning, a system message), ' +
      'or its cache accounting leaves cached tokens out of prompt_tokens (legitimate).';
  }
  return { rule: PROMPT_RULE, severity: 'warning', message: `${head} ${why}`, location: 'usage' };
}

const check: Check = {
  id: PROMPT_RULE,
  severity: 'warning',
  title: 'Prompt token mismatch',
  why: 'A provider that renders the prompt with another chat template feeds the model a prompt it was not trained on; tool calls break first.',
  run: (ctx) => {
    if (ctx.promptTokens === undefined) return [];
    const f = promptTokenFinding(ctx.promptTokens, ctx.response?.usage);
    return f ? [f] : [];
  },
};

export default check;

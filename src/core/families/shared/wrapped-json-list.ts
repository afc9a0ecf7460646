/**
 * Verdicts shared by the families that wrap a JSON list of calls in one tag pair (AI21 Jamba `<tool_calls>[…]</tool_calls>`,
 * Nemotron `<TOOLCALL>[…]</TOOLCALL>`): the conformance inputs are the same up to the tag, and Dynamo 3.0.0 treats
 * both alike (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/dynamo-3.0.0/{jamba,nemotron_deci}/
 * TOOLCALLING.batch.5.yaml @ 8d4b1bff82df). The family files give the tag and what vLLM and SGLang do.
 */
import type { EngineVerdict, VerdictCase } from './verdicts';

type PerEngine = { vllm: EngineVerdict; sglang: EngineVerdict };

export function wrappedJsonListCases(tag: string, engines: (id: string) => PerEngine): VerdictCase[] {
  const close = `</${tag.slice(1)}`;
  const c = (id: string, cls: VerdictCase['class'], calls: VerdictCase['calls'], what: string, dynamo: EngineVerdict): VerdictCase => ({
    id,
    class: cls,
    calls,
    what,
    verdicts: { ...engines(id), dynamo },
  });
  return [
    c('5.a', 'unclosed-complete', 'single', `${close} missing after a complete call list`, {
      outcome: 'recovered',
      text: 'the complete call is delivered, the markup stripped',
    }),
    c('5.b', 'orphan-close', 'single', `a call list and ${close} without ${tag}`, {
      outcome: 'recovered',
      text: 'the call is recovered, the orphan close stripped',
    }),
    c('5.c', 'unclosed-truncated', 'single', 'output stopped inside the arguments', { outcome: 'dropped', text: 'no call, empty content' }),
    c('5.d', 'unclosed-complete', 'multi', `${close} missing after several complete calls`, {
      outcome: 'recovered',
      text: 'both calls are delivered; the prose stays',
    }),
    c('5.e', 'unclosed-truncated', 'multi', 'the last of several calls cut off mid-value', {
      outcome: 'cut-call-delivered',
      text: 'both calls are delivered, the last with its cut value ("New York")',
    }),
  ];
}

/**
 * The dialects of one Chat Completions request body: what differs between backends when it is replayed elsewhere
 * (a re-run, a comparison) or rendered with a chat template (wire-formats.md §8):
 * - Kimi's thinking switch: Moonshot's API takes `thinking: {type: "enabled"|"disabled"}`, open-source servers
 *   (SGLang, vLLM) take `chat_template_kwargs: {thinking: bool}`, OpenRouter takes `reasoning: {enabled: bool}`;
 * - OpenRouter-only fields (routing, plugins, usage accounting) mean nothing to SGLang and are dropped.
 * Everything else is sent exactly as captured.
 */

export type Backend = 'openrouter' | 'moonshot' | 'sglang';

type Body = Record<string, unknown>;

/** Fields only OpenRouter understands (§1.2, §1.3). */
const OPENROUTER_ONLY = [
  'provider',
  'models',
  'route',
  'transforms',
  'plugins',
  'usage',
  'reasoning',
  'include_reasoning',
  'preset',
  'debug',
];
/** SGLang / vLLM sampling extras OpenRouter and Moonshot do not take (§2.3). */
const SERVER_ONLY = [
  'separate_reasoning',
  'stream_reasoning',
  'skip_special_tokens',
  'chat_template_kwargs',
  'no_stop_trim',
  'return_hidden_states',
];

const isObj = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the body asks for thinking, in any backend's dialect; undefined when it does not say. */
export function thinkingIntent(body: Body): boolean | undefined {
  const kw = body.chat_template_kwargs;
  if (isObj(kw)) {
    if (typeof kw.thinking === 'boolean') return kw.thinking;
    if (typeof kw.enable_thinking === 'boolean') return kw.enable_thinking;
  }
  const t = body.thinking;
  if (isObj(t) && (t.type === 'enabled' || t.type === 'disabled')) return t.type === 'enabled';
  const r = body.reasoning;
  if (isObj(r)) {
    if (typeof r.enabled === 'boolean') return r.enabled;
    if (r.effort === 'none') return false;
    if (typeof r.effort === 'string' || typeof r.max_tokens === 'number') return true;
  }
  if (typeof body.include_reasoning === 'boolean') return body.include_reasoning;
  return undefined;
}

/** The body for `to`, with the thinking switch in that backend's dialect. Never mutates its input. */
export function translateBody(body: Body, to: Backend): Body {
  const thinking = thinkingIntent(body);
  const out: Body = { ...body };
  delete out.thinking;
  const kw = isObj(out.chat_template_kwargs) ? { ...out.chat_template_kwargs } : undefined;
  if (kw) {
    delete kw.thinking;
    delete kw.enable_thinking;
  }
  switch (to) {
    case 'sglang': {
      for (const f of OPENROUTER_ONLY) delete out[f];
      const merged = { ...kw, ...(thinking !== undefined && { thinking }) };
      if (Object.keys(merged).length) out.chat_template_kwargs = merged;
      else delete out.chat_template_kwargs;
      return out;
    }
    case 'moonshot':
      for (const f of [...OPENROUTER_ONLY, ...SERVER_ONLY]) delete out[f];
      if (thinking !== undefined) out.thinking = { type: thinking ? 'enabled' : 'disabled' };
      return out;
    case 'openrouter':
      for (const f of SERVER_ONLY) delete out[f];
      delete out.include_reasoning;
      if (thinking !== undefined) out.reasoning = { ...(isObj(body.reasoning) ? body.reasoning : {}), enabled: thinking };
      return out;
  }
}

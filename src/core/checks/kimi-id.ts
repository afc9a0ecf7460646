/**
 * Shapes of Kimi K2 tool-call ids. Moonshot's format is `functions.NAME:IDX` with IDX a counter over the whole
 * conversation; SGLang's kimi_k2 parser accepts `(functions.)?NAME:IDX`, and real healthy traffic carries bare
 * `NAME:IDX` (OpenRouter / Moonshot AI: `weather:0`). Anything else is either an off-distribution model id
 * (`functions_read_1`, `functionsexec5`: parsers drop the call) or a foreign id (`call_…`) that pushes K2
 * off-distribution once echoed back in history (MoonshotAI/Kimi-K2#128, K2 Vendor Verifier README).
 */
export type KimiIdShape =
  | { kind: 'canonical'; name: string; index: number }
  | { kind: 'bare'; name: string; index: number }
  | { kind: 'malformed' }
  | { kind: 'foreign' };

const CANONICAL = /^functions\.([^\s:]+):(\d+)$/;
const BARE = /^([^\s:]+):(\d+)$/;

export function kimiIdShape(id: string): KimiIdShape {
  let m = CANONICAL.exec(id);
  if (m) return { kind: 'canonical', name: m[1], index: Number(m[2]) };
  m = BARE.exec(id);
  if (m) return { kind: 'bare', name: m[1], index: Number(m[2]) };
  // The model's own broken attempts at the format start with `functions` or carry a `:`; other ids come from servers.
  if (/^functions/.test(id) || id.includes(':') || /\s|<\|/.test(id)) return { kind: 'malformed' };
  return { kind: 'foreign' };
}

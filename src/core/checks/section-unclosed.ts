import { getFormat } from '../families/index';
import type { Check } from './types';
import { familyName, findMarkers, problemFindings, where } from './scan';

/** The classic Kimi K2 failure behind some OpenRouter providers (anomalyco/opencode#1021). */
const check: Check = {
  id: 'section-unclosed',
  severity: 'error',
  title: 'Tool-call section never closed',
  why: "Parsers that require the section end (Moonshot's reference parser, K2 Vendor Verifier, some vLLM/SGLang builds) drop every call in the section, so the agent gets no tool call.",
  run: (ctx) =>
    problemFindings(ctx, check, 'section-unclosed', (p) => {
      const first = findMarkers(ctx.native.text, p.start, Math.min(p.end, p.start + 64))[0];
      const opened = first?.start === p.start ? ` by ${first.marker}` : '';
      const missing = p.marker ?? getFormat(p.family).sectionEnd ?? 'the section end marker';
      const at = p.expectedAt === undefined ? '' : ` (expected at offset ${p.expectedAt})`;
      return `${familyName(p.family)} tool-call section${where(p)} opened${opened} at offset ${p.start} is never closed: ${missing} is missing${at}.`;
    }),
};

export default check;

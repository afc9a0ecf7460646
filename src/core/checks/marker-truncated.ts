import type { Check } from './types';
import { problemFindings, where } from './scan';

/** anomalyco/opencode#8851: reasoning ending with `<|tool_calls_section_end|` (no final `>`). */
const check: Check = {
  id: 'marker-truncated',
  severity: 'error',
  title: 'Marker cut short',
  why: 'A marker missing its last characters is no marker to any parser: the structure it should close stays open and the fragment lands in the text the agent shows.',
  run: (ctx) =>
    problemFindings(ctx, check, 'marker-truncated', (p) => {
      const seen = JSON.stringify(ctx.native.text.slice(p.start, p.end));
      const full = p.marker ? `; the full marker is ${p.marker}` : '';
      return `Marker cut short${where(p)} at offset ${p.start}: the text has ${seen}${full}.`;
    }),
};

export default check;

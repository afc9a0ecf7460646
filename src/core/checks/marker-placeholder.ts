import type { Check } from './types';
import { familyName, problemFindings, where } from './scan';

/**
 * A marker's special id written as a placeholder (`<|reserved_token_163595|>`): the serving stack's tokenizer had no
 * name for it, so the engine's tool parser, which looks for `<|tool_calls_section_begin|>`, found no call.
 */
const check: Check = {
  id: 'marker-placeholder',
  severity: 'error',
  title: 'Marker shown as a reserved-token placeholder',
  why: "The server's tokenizer does not know the family's marker ids, so its tool parser never sees the markers: the calls reach the agent as text, or not at all.",
  run: (ctx) =>
    problemFindings(ctx, check, 'marker-placeholder', (p) => {
      const shown = JSON.stringify(ctx.native.text.slice(p.start, p.end));
      return `${shown}${where(p)} at offset ${p.start} is ${familyName(p.family)}'s ${p.marker} by its id: the serving stack's tokenizer has no name for it, so its tool parser cannot see the marker (use the model's own tokenizer files).`;
    }),
};

export default check;

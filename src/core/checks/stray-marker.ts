import type { Check } from './types';
import { problemFindings, where } from './scan';

const check: Check = {
  id: 'stray-marker',
  severity: 'warning',
  title: 'Marker where none belongs',
  why: 'A closing marker without its opening one (or a marker out of order) means the model lost track of the format; the surrounding call is often lost with it.',
  run: (ctx) =>
    problemFindings(ctx, check, 'stray-marker', (p) => {
      const m = p.marker ?? JSON.stringify(ctx.native.text.slice(p.start, p.end));
      return `${m}${where(p)} at offset ${p.start} where none belongs: ${p.message}`;
    }),
};

export default check;

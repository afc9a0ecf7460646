import verdicts from './verdicts';
import { phi4 as format } from './grammar';
import type { Family } from '../types';

export const phi4: Family<'phi4'> = {
  id: 'phi4',
  format,
  verdicts,
  tokenizer: { repo: 'microsoft/Phi-4-mini-instruct' },
  repair: {
    openers: ['functools['],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

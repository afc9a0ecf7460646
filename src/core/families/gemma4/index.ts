import verdicts from './verdicts';
import { gemma4 as format } from './grammar';
import type { Family } from '../types';

export const gemma4: Family<'gemma4'> = {
  id: 'gemma4',
  format,
  verdicts,
  tokenizer: { repo: 'google/gemma-4-31b-it' },
  repair: {
    openers: ['<|tool_call>'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

import verdicts from '../engines/gemma4';
import { gemma4 as format } from '../formats/gemma4';
import type { Family } from './types';

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

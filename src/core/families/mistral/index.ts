import verdicts from './verdicts';
import { mistral as format } from './grammar';
import type { Family } from '../types';

export const mistral: Family<'mistral'> = {
  id: 'mistral',
  format,
  verdicts,
  tokenizer: { repo: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506' },
  repair: {
    openers: ['[TOOL_CALLS]'],
    stripped: [],
    arguments: 'json',
    callIds: 'written',
  },
};

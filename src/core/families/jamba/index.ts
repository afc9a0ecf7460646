import verdicts from './verdicts';
import { jamba as format } from './grammar';
import type { Family } from '../types';

export const jamba: Family<'jamba'> = {
  id: 'jamba',
  format,
  verdicts,
  tokenizer: { repo: 'ai21labs/AI21-Jamba-Mini-1.7' },
  repair: {
    openers: ['<tool_calls>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

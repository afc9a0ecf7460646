import verdicts from './verdicts';
import { llama3Json as format } from './grammar';
import type { Family } from '../types';

export const llama3Json: Family<'llama3-json'> = {
  id: 'llama3-json',
  format,
  verdicts,
  tokenizer: { repo: 'meta-llama/Llama-3.3-70B-Instruct' },
  repair: {
    openers: ['<|python_tag|>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

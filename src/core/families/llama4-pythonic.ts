import verdicts from '../engines/llama4-pythonic';
import { llama4Pythonic as format } from '../formats/llama4-pythonic';
import type { Family } from './types';

export const llama4Pythonic: Family<'llama4-pythonic'> = {
  id: 'llama4-pythonic',
  format,
  verdicts,
  tokenizer: { repo: 'meta-llama/Llama-4-Scout-17B-16E-Instruct' },
  repair: {
    openers: ['<|python_start|>', '<|python_tag|>'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

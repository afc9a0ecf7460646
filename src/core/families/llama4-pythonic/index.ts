import verdicts from './verdicts';
import { llama4Pythonic as format } from './grammar';
import type { Family } from '../types';

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
  // A call list is plain `[read(path="a.md")]`, with no marker of its own.
  leaks: { unmarked: true },
};

import verdicts from './verdicts';
import { nemotron as format } from './grammar';
import type { Family } from '../types';

export const nemotron: Family<'nemotron'> = {
  id: 'nemotron',
  format,
  verdicts,
  tokenizer: { repo: 'nvidia/Llama-3_3-Nemotron-Super-49B-v1_5' },
  repair: {
    openers: ['<TOOLCALL>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

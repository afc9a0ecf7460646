import verdicts from './verdicts';
import { minimaxM2 as format } from './grammar';
import type { Family } from '../types';

export const minimaxM2: Family<'minimax-m2'> = {
  id: 'minimax-m2',
  format,
  verdicts,
  tokenizer: { repo: 'MiniMaxAI/MiniMax-M2' },
  repair: {
    openers: ['<minimax:tool_call>', '<invoke name="'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

import verdicts from './verdicts';
import { minimaxM3 as format } from './grammar';
import type { Family } from '../types';

export const minimaxM3: Family<'minimax-m3'> = {
  id: 'minimax-m3',
  format,
  verdicts,
  tokenizer: { repo: 'MiniMaxAI/MiniMax-M3' },
  repair: {
    openers: [']<]minimax[>[<tool_call>', ']<]minimax[>[<invoke name="'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

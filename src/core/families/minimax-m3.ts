import verdicts from '../engines/minimax-m3';
import { minimaxM3 as format } from '../formats/minimax-m3';
import type { Family } from './types';

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

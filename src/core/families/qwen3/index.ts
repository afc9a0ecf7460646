import verdicts from './verdicts';
import { qwen3 as format } from './grammar';
import type { Family } from '../types';

export const qwen3: Family<'qwen3'> = {
  id: 'qwen3',
  format,
  verdicts,
  tokenizer: { repo: 'Qwen/Qwen3-235B-A22B-Instruct-2507' },
  repair: {
    openers: ['<tool_call>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

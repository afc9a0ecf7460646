import verdicts from './verdicts';
import { qwen3Coder as format } from './grammar';
import type { Family } from '../types';

export const qwen3Coder: Family<'qwen3-coder'> = {
  id: 'qwen3-coder',
  format,
  verdicts,
  tokenizer: { repo: 'Qwen/Qwen3-Coder-480B-A35B-Instruct' },
  repair: {
    openers: ['<tool_call>', '<function='],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

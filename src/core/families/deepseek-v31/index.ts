import verdicts from './verdicts';
import { deepseekV31 as format } from '../deepseek-v3/grammar';
import type { Family } from '../types';

export const deepseekV31: Family<'deepseek-v31'> = {
  id: 'deepseek-v31',
  format,
  verdicts,
  tokenizer: { repo: 'deepseek-ai/DeepSeek-V3.1' },
  repair: {
    openers: ['<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

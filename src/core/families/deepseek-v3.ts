import verdicts from '../engines/deepseek-v3';
import { deepseekV3 as format } from '../formats/deepseek';
import type { Family } from './types';

export const deepseekV3: Family<'deepseek-v3'> = {
  id: 'deepseek-v3',
  format,
  verdicts,
  tokenizer: { repo: 'deepseek-ai/DeepSeek-V3' },
  repair: {
    openers: ['<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

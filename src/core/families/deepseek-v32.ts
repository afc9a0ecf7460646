import verdicts from '../engines/deepseek-v32';
import { deepseekV32 as format } from '../formats/deepseek-dsml';
import type { Family } from './types';

export const deepseekV32: Family<'deepseek-v32'> = {
  id: 'deepseek-v32',
  format,
  verdicts,
  tokenizer: { repo: 'deepseek-ai/DeepSeek-V3.2' },
  repair: {
    openers: ['<｜DSML｜function_calls>', '<｜DSML｜invoke name="', '<｜DSML｜parameter name="'],
    stripped: [],
    arguments: 'tagged',
  },
};

import verdicts from './verdicts';
import { deepseekV41 as format } from '../deepseek-v32/grammar';
import type { Family } from '../types';
import { DSML_SPELLINGS } from '../deepseek-v32';

export const deepseekV41: Family<'deepseek-v41'> = {
  id: 'deepseek-v41',
  format,
  verdicts,
  tokenizer: { repo: 'deepseek-ai/DeepSeek-V4.1-Flash' },
  repair: {
    openers: ['<｜DSML｜ calls>', '<｜DSML｜ invoke name="', '<｜DSML｜ parameter name="', ...DSML_SPELLINGS],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
  // DeepSeek's API thinks by default and wants the reasoning of tool-call turns back in every later request.
  history: {
    reasoningWithToolCalls: 'required',
    api: 'DeepSeek',
    thinksByDefault: /^deepseek-v4/,
    error: 'The reasoning_content in the thinking mode must be passed back to the API.',
  },
};

import verdicts from '../engines/deepseek-v4';
import { deepseekV4 as format } from '../formats/deepseek-dsml';
import type { Family } from './types';
import { DSML_SPELLINGS } from './deepseek-v32';

export const deepseekV4: Family<'deepseek-v4'> = {
  id: 'deepseek-v4',
  format,
  verdicts,
  tokenizer: { repo: 'deepseek-ai/DeepSeek-V4' },
  repair: {
    openers: ['<｜DSML｜tool_calls>', '<｜DSML｜invoke name="', '<｜DSML｜parameter name="', '<｜DSML｜ calls>', '<｜DSML｜ invoke name="', '<｜DSML｜ parameter name="', ...DSML_SPELLINGS],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

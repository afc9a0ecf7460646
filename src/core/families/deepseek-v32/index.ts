import verdicts from './verdicts';
import { deepseekV32 as format } from './grammar';
import type { Family } from '../types';

/** The DSML spellings seen in the wild beside the canonical one (grammar.ts): repair holds them back too. */
export const DSML_SPELLINGS = ['<｜｜DSML｜｜', '<|DSML|', '< | DSML | '];

export const deepseekV32: Family<'deepseek-v32'> = {
  id: 'deepseek-v32',
  format,
  verdicts,
  tokenizer: { repo: 'deepseek-ai/DeepSeek-V3.2' },
  repair: {
    openers: ['<｜DSML｜function_calls>', '<｜DSML｜invoke name="', '<｜DSML｜parameter name="', ...DSML_SPELLINGS],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
  // DeepSeek's thinking mode: reasoning of tool-call turns goes back in every later request (api-docs thinking_mode).
  history: {
    reasoningWithToolCalls: 'required',
    api: 'DeepSeek',
    error: 'Missing `reasoning_content` field in the assistant message at message index {index}',
  },
};

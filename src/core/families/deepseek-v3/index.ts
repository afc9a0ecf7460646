import verdicts from './verdicts';
import { deepseekV3 as format } from './grammar';
import type { Family } from '../types';

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
  // DeepSeek's own API serves `deepseek-chat` with a newer model that thinks when asked (`thinking: {type: enabled}`);
  // V3 and R1 elsewhere demand nothing (R1's API even refused reasoning sent back).
  history: {
    reasoningWithToolCalls: 'required',
    api: 'DeepSeek',
    models: /^deepseek-chat$/,
    error: 'Missing `reasoning_content` field in the assistant message at message index {index}',
  },
};

import verdicts from '../engines/kimi-k2';
import { kimi as format } from '../formats/kimi';
import type { Family } from './types';

export const kimiK2: Family<'kimi-k2'> = {
  id: 'kimi-k2',
  format,
  verdicts,
  tokenizer: { repo: 'moonshotai/Kimi-K2-Instruct-0905' },
  repair: {
    openers: ['<|tool_calls_section_begin|>', '<|tool_call_section_begin|>', '<|tool_call_begin|>'],
    stripped: [],
    arguments: 'json',
    callIds: 'kimi',
  },
};

import verdicts from './verdicts';
import { step3 as format } from './grammar';
import type { Family } from '../types';

export const step3: Family<'step3'> = {
  id: 'step3',
  format,
  verdicts,
  tokenizer: { repo: 'stepfun-ai/step3' },
  repair: {
    openers: ['<｜tool_calls_begin｜>', '<｜tool_call_begin｜>', '<steptml:invoke name="', '<steptml:parameter name="'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

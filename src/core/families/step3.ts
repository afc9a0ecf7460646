import verdicts from '../engines/step3';
import { step3 as format } from '../formats/step3';
import type { Family } from './types';

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

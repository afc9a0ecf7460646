import verdicts from '../engines/gpt-oss';
import { harmony as format } from '../formats/harmony';
import type { Family } from './types';

export const gptOss: Family<'gpt-oss'> = {
  id: 'gpt-oss',
  format,
  verdicts,
  tokenizer: { repo: 'openai/gpt-oss-120b' },
  repair: {
    openers: ['<|start|>', '<|channel|>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

import verdicts from './verdicts';
import { ling3 as format } from '../glm45/grammar';
import type { Family } from '../types';

export const ling3: Family<'ling3'> = {
  id: 'ling3',
  format,
  verdicts,
  tokenizer: { repo: 'inclusionAI/Ling-1T' },
  repair: {
    openers: ['<tool_call>', '<arg_key>', '<arg_value>'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

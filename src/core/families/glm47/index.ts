import verdicts from './verdicts';
import { glm47 as format } from '../glm45/grammar';
import type { Family } from '../types';

export const glm47: Family<'glm47'> = {
  id: 'glm47',
  format,
  verdicts,
  tokenizer: { repo: 'zai-org/GLM-4.7' },
  repair: {
    openers: ['<tool_call>', '<arg_key>', '<arg_value>'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

import verdicts from './verdicts';
import { glm45 as format } from './grammar';
import type { Family } from '../types';

export const glm45: Family<'glm45'> = {
  id: 'glm45',
  format,
  verdicts,
  tokenizer: { repo: 'zai-org/GLM-4.5' },
  repair: {
    openers: ['<tool_call>'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

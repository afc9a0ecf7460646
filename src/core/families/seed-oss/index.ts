import verdicts from './verdicts';
import { seedOss as format } from './grammar';
import type { Family } from '../types';

export const seedOss: Family<'seed-oss'> = {
  id: 'seed-oss',
  format,
  verdicts,
  tokenizer: { repo: 'ByteDance-Seed/Seed-OSS-36B-Instruct' },
  repair: {
    openers: ['<seed:tool_call>', '<function=', '<parameter='],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

import verdicts from './verdicts';
import { kimiK3 as format } from './grammar';
import type { Family } from '../types';

export const kimiK3: Family<'kimi-k3'> = {
  id: 'kimi-k3',
  format,
  verdicts,
  tokenizer: { repo: 'moonshotai/Kimi-K3' },
  repair: {
    openers: ['<|open|>tools<|sep|>', '<|open|>call tool="', '<|open|>argument key="'],
    stripped: ['<|open|>response<|sep|>', '<|close|>response<|sep|>'],
    arguments: 'tagged',
    callIds: 'digest',
  },
};

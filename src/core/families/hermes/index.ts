import verdicts from './verdicts';
import { hermes as format } from './grammar';
import type { Family } from '../types';

export const hermes: Family<'hermes'> = {
  id: 'hermes',
  format,
  verdicts,
  tokenizer: { repo: 'NousResearch/Hermes-3-Llama-3.1-8B' },
  repair: {
    openers: ['<tool_call>'],
    stripped: [],
    arguments: 'json',
    callIds: 'digest',
  },
};

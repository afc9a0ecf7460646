import verdicts from './verdicts';
import { harmony as format, parseStrippedHarmony } from './grammar';
import type { Family } from '../types';

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
  // Every marker is a special token: `skip_special_tokens` leaves `commentary to=functions.get_weather json{…}` in content.
  leaks: { stripped: parseStrippedHarmony },
};

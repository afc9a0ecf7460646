import verdicts from './verdicts';
import { kimi as format, kimiIdShape, parseStrippedKimi } from './grammar';
import type { Family } from '../types';

export const kimiK2: Family<'kimi-k2'> = {
  id: 'kimi-k2',
  format,
  verdicts,
  tokenizer: {
    repo: 'moonshotai/Kimi-K2-Instruct-0905',
    // One rank file serves K2, K2-Thinking, K2.5 and K2.6; the special-token table is the K2-Thinking / K2.5 one.
    bundled: {
      dir: 'kimi-k2',
      repos: [
        'moonshotai/Kimi-K2-Instruct',
        'moonshotai/Kimi-K2-Instruct-0905',
        'moonshotai/Kimi-K2-Thinking',
        'moonshotai/Kimi-K2.5',
        'moonshotai/Kimi-K2.6',
      ],
    },
  },
  repair: {
    openers: ['<|tool_calls_section_begin|>', '<|tool_call_section_begin|>', '<|tool_call_begin|>'],
    stripped: [],
    arguments: 'json',
    callIds: 'kimi',
  },
  indexedCallIds: { shape: kimiIdShape },
  // Every marker is a special token: `skip_special_tokens` leaves `functions.write:0{"path": "a"}` in content.
  leaks: { stripped: parseStrippedKimi },
  // Moonshot's API (and gateways in front of it) answers 400 when a thinking turn's reasoning is not sent back.
  history: {
    reasoningWithToolCalls: 'required',
    api: 'Moonshot AI',
    thinksByDefault: /kimi-k2(?:[.-]?thinking|[.-][5-9](?!\d))/,
    error: 'thinking is enabled but reasoning_content is missing in assistant tool call message at index {index}',
  },
};

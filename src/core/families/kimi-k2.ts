import verdicts from '../engines/kimi-k2';
import { kimi as format } from '../formats/kimi';
import type { Family } from './types';

export const kimiK2: Family<'kimi-k2'> = {
  id: 'kimi-k2',
  format,
  verdicts,
  tokenizer: { repo: 'moonshotai/Kimi-K2-Instruct-0905' },
  repair: {
    openers: ['<|tool_calls_section_begin|>', '<|tool_call_section_begin|>', '<|tool_call_begin|>'],
    stripped: [],
    arguments: 'json',
    callIds: 'kimi',
  },
  // Moonshot's API (and gateways in front of it) answers 400 when a thinking turn's reasoning is not sent back.
  history: {
    reasoningWithToolCalls: 'required',
    api: 'Moonshot AI',
    thinksByDefault: /kimi-k2(?:[.-]?thinking|[.-][5-9](?!\d))/,
    error: 'thinking is enabled but reasoning_content is missing in assistant tool call message at index {index}',
  },
};

import { READ_TOOL } from '../fixtures/openrouter-emulator';

/**
 * The comparison the compare-view tests run against the OpenRouter emulator (test/fixtures/openrouter-emulator.ts):
 * a streamed Kimi K2 request with one tool, and the providers picked for it: the emulator's correct one, the one that
 * leaks markup into content, the one that violates the tool schema, and the one that is down.
 */
export const COMPARE_REQUEST = {
  model: 'moonshotai/kimi-k2-0905',
  stream: true,
  messages: [{ role: 'user', content: 'Read the README' }],
  tools: [READ_TOOL],
};

export const COMPARE_PROVIDERS = ['fireworks', 'chutes', 'groq', 'atlas-cloud'];

/**
 * Tokens: the model's own tokenizer (Kimi's tiktoken ranks, or a tokenizer.json), where it comes from (a local
 * folder, the download cache, the Hugging Face Hub), the token stream of an exchange, and token accounting.
 * A long-lived host (the extension) runs this off its main thread through `TokenWorker` (worker.ts).
 */
export type { Tokenizer } from './types';
export { loadTokenizer, loadFromDir, localTokenizerDir, tokenizerRepo, tokenizerRepoFor, TokenizerPool, type TokenizerRequest } from './resolve';
export { BUNDLED_TOKENIZERS, bundledTokenizerDir, TokenizerMissingError } from './local';
export { downloadHubFile, hubEndpoint, DEFAULT_HUB_ENDPOINT, type DownloadProgress, type HubOptions } from './hub';
export { loadKimiTokenizer, KIMI_PATTERN, KIMI_PAT_STR, KIMI_SPECIAL_SLOTS } from './kimi';
export { loadHfTokenizer } from './hf';
export {
  buildTokenStream,
  decodeIds,
  idsFromLogprobs,
  mapFindings,
  type StreamToken,
  type TokenFinding,
  type TokenKind,
  type TokenSource,
  type TokenStream,
  type TokenStreamInput,
} from './stream';
export { accountTokens, ACCOUNTING_RULE, ACCOUNTING_TOLERANCE, type TokenAccounting } from './accounting';
export { exchangeTokenStream, type ExchangeTokensInput } from './exchange';
export { TokenWorker, type TokenJobOptions } from './client';
export type { WorkerTokenizerRequest } from './worker-protocol';
export { visibleBytes } from './visible';

import type { AnalyzeInput } from '../analyze';
import type { Analysis } from '../model';
import type { DownloadProgress, HubOptions } from './hub';
import type { TokenizerRequest } from './resolve';
import type { TokenTable } from './table';

/** Messages between the token worker (worker.ts) and its client (client.ts). Everything is structured-cloneable. */

/** A tokenizer request without its callbacks (they cannot cross threads; progress comes back as messages). */
export type WorkerTokenizerRequest = Omit<TokenizerRequest, 'hub' | 'onWarning'> & { hub?: Omit<HubOptions, 'onProgress' | 'signal'> };

export interface StreamJob {
  id: number;
  tokenizer: WorkerTokenizerRequest;
  /** `analysis`: the exchange's stored analysis, used instead of analysing again (tokens/exchange.ts). */
  input: AnalyzeInput & { analysis?: Analysis };
}

export type WorkerReply =
  | { id: number; type: 'progress'; progress: DownloadProgress }
  | { id: number; type: 'warning'; message: string }
  /** The table's columns come transferred, not copied. */
  | { id: number; type: 'done'; table: TokenTable; analysis: Analysis }
  /** `missing`: the tokenizer is not on this machine and the job asked for no download (a TokenizerMissingError). */
  | { id: number; type: 'failed'; message: string; userError: boolean; missing?: { repo: string; dir: string } };

/**
 * Token streams for opened exchanges, in the model's own tokenizer. Loading a tokenizer (1–3 s) and encoding a long
 * response run in the core's worker thread (dist/tokens-worker.js), never on the extension host's thread.
 * Nothing is downloaded unless asked (`download`): a tokenizer that is neither shipped (Kimi K2), in the folder
 * setting, nor downloaded before comes back as `needed`, and the token view offers the download or a folder.
 * No `vscode` import: the settings come in as a getter.
 */
import { UserError } from '../core/model';
import { ruleInfo } from '../core/checks/index';
import { TokenWorker } from '../core/tokens/client';
import type { DownloadProgress } from '../core/tokens/hub';
import { TokenizerMissingError } from '../core/tokens/local';
import type { ExchangeAnalysis } from '../core/analyze';
import { tokenStreamView } from './exchangeView';
import type { TokenJob, TokensResult } from './liveFeed';

export interface TokenizeOptions {
  /** The tokenizer folder setting (wins over everything). */
  tokenizerDir?: string;
  /** The folder of the tokenizers shipped with the extension (its `tokenizers/`). */
  bundledDir?: string;
  /** Where Hub downloads are kept. */
  cacheDir?: string;
  /** Hugging Face token for gated repos (from secret storage). */
  hfToken?: string;
  onWarning?: (message: string) => void;
  /** Called on the first byte of a Hub download; the sink shows progress until `done()`. */
  startDownload?: () => DownloadSink;
}

export interface DownloadSink {
  report(p: DownloadProgress): void;
  done(): void;
}

export class ExchangeTokenizer {
  private worker: TokenWorker;

  constructor(
    private readonly workerFile: string,
    private readonly options: () => Promise<TokenizeOptions>,
  ) {
    this.worker = new TokenWorker(workerFile);
  }

  /**
   * The token stream of an analysed exchange, or a one-line reason why there is none (with `needed` when the
   * tokenizer is not on this machine). `job.download`: fetch a missing tokenizer from the Hub first.
   */
  async tokens(result: ExchangeAnalysis | undefined, job: TokenJob = {}): Promise<TokensResult> {
    if (!result) return { reason: 'There is no analysed response to tokenize.' };
    const { tokenizerDir, bundledDir, cacheDir, hfToken, onWarning, startDownload } = await this.options();
    const model = result.response.model ?? result.request?.model;
    let sink: DownloadSink | undefined;
    const onProgress = (p: DownloadProgress) => {
      sink ??= startDownload?.();
      sink?.report(p);
      job.onProgress?.(p);
    };
    try {
      // The tokens come back in columns (transferred, not copied) and go into the view's columns as they are.
      const { table } = await this.worker.tokenTable(
        {
          model,
          family: result.analysis.family,
          tokenizerDir,
          bundledDir,
          cacheDir,
          offline: !job.download,
          hub: hfToken ? { token: hfToken } : undefined,
        },
        // The stored analysis goes along: the token view shows the findings the Problems panel shows.
        { response: result.response, request: result.request, model, analysis: result.analysis },
        { onWarning, onProgress },
      );
      return { stream: tokenStreamView(table, ruleInfo) };
    } catch (e) {
      if (e instanceof TokenizerMissingError) {
        return {
          reason: `No tokenizer for ${e.repo} on this machine yet: download it from the Hugging Face Hub or choose a folder that holds it (Tokens tab).`,
          needed: { repo: e.repo, dir: e.dir },
        };
      }
      if (e instanceof UserError)
        return { reason: `No tokenizer: ${e.message}${tokenizerDir ? ' (the folder of the setting tokenscope.tokenizer.folder)' : ''}` };
      throw e;
    } finally {
      sink?.done();
    }
  }

  /** Forget loaded tokenizers (the folder setting changed): the next job starts a fresh worker. */
  async clear(): Promise<void> {
    const old = this.worker;
    this.worker = new TokenWorker(this.workerFile);
    await old.dispose();
  }

  dispose(): Promise<void> {
    return this.worker.dispose();
  }
}

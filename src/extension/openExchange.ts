/**
 * An exchange as a panel shows it, without `vscode`: exchanges.ts caches it and adds the raw document and the
 * Problems entries; the live bench reads it the same way. Its analysis is the one the store stored (a streaming
 * exchange has none yet: it is analysed as it is now).
 */
import type { ExchangeAnalysis } from '../core/analyze';
import { resultWhenAnalysed } from '../core/capture/analysis';
import type { CaptureStore } from '../core/capture/store';
import { ruleInfo } from '../core/checks/index';
import { ProviderDirectory } from '../core/policy/slugs';
import { exchangeView, withoutWireEvents } from './exchangeView';
import type { OpenedCore } from './liveFeed';

export interface OpenedView extends OpenedCore {
  /** Why `result` is missing. */
  unavailable?: string;
}

export async function openExchange(
  store: CaptureStore | undefined,
  id: string,
  onError: (message: string, e: Error) => void,
): Promise<OpenedView | undefined> {
  const exchange = store?.get(id);
  const body = exchange && store?.readResponse(id);
  if (!store || !exchange || !body) return undefined;
  let result: ExchangeAnalysis | undefined;
  let unavailable: string | undefined;
  if (exchange.status === undefined) unavailable = 'No response yet.';
  else {
    try {
      result = await resultWhenAnalysed(store, exchange, body.bytes, body.chunks);
    } catch (e) {
      unavailable = `Analysis failed: ${(e as Error).message.split('\n')[0]}`;
      onError(`analysis of ${id} failed`, e as Error);
    }
  }
  const view = exchangeView({
    exchange,
    chunks: body.chunks,
    result,
    unavailable,
    ruleInfo,
    slugs: new ProviderDirectory(store.providerSlugs()),
  });
  // Kept for as long as the panel is open (and in the exchanges cache): only what the view and the tokenizer need.
  return { exchange, result: result && withoutWireEvents(result), unavailable, view };
}

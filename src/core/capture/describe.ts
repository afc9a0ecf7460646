/** One-line descriptions of captured exchanges, shared by the CLI (`serve`, `captures`, `show`) and the extension. */
import type { CapturedExchange, ExchangeSummary, Finding } from '../model';

/** The model that answered, else the one requested. */
export function exchangeModel(x: CapturedExchange): string | undefined {
  return x.summary?.model ?? x.requestModel;
}

/** The provider that served the request, as the upstream named it. */
export function exchangeProvider(x: CapturedExchange): string | undefined {
  return x.summary?.provider ?? x.servedProvider;
}

export function findingsText(summary: ExchangeSummary | undefined): string {
  if (!summary) return 'not analysed';
  const { error, warning, info } = summary.counts;
  const n = error + warning + info;
  if (n === 0) return 'no findings';
  const parts = [
    error && `${error} error${error > 1 ? 's' : ''}`,
    warning && `${warning} warning${warning > 1 ? 's' : ''}`,
    info && `${info} info`,
  ].filter(Boolean);
  return `${n} finding${n > 1 ? 's' : ''} (${parts.join(', ')})`;
}

/** `status finish`, or the state when the exchange did not end normally. */
export function outcomeText(x: CapturedExchange): string {
  const status = x.status === undefined ? 'no response' : String(x.status);
  if (x.state === 'streaming') return `${status} streaming`;
  if (x.state !== 'complete') return `${status} ${x.state}`;
  return x.summary?.finishReason ? `${status} ${x.summary.finishReason}` : status;
}

export function localTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** `id  agent  model via provider  status finish  findings` */
export function exchangeLine(x: CapturedExchange): string {
  const model = exchangeModel(x) ?? x.path.split('?')[0];
  const provider = exchangeProvider(x);
  return [x.id, x.agent ?? 'unknown', provider ? `${model} via ${provider}` : model, outcomeText(x), findingsText(x.summary)].join('  ');
}

export function findingLine(f: Finding): string {
  return `${f.severity} ${f.rule} (${f.location}): ${f.message}`;
}

/** Broken: an error finding, an exchange that errored or was cut short, or an HTTP error status. */
export function isBrokenExchange(x: CapturedExchange): boolean {
  return (
    (x.summary?.counts.error ?? 0) > 0 || x.state === 'error' || x.state === 'incomplete' || (x.status !== undefined && x.status >= 400)
  );
}

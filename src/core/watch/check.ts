/**
 * Regression watch: a broken capture becomes a case (./list.ts); a re-check sends the case's request again to its
 * pinned provider N times, each answer recorded as a new capture linked to the case's capture, and says whether the
 * bug is still there (the same rule broke), fixed (no error in any sample) or broken differently.
 */
import { resultFor } from '../capture/analysis';
import { findCapture, type CaptureStore } from '../capture/store';
import { UserError, type CaptureReader, type CapturedExchange } from '../model';
import { isOpenRouter } from '../policy/policy';
import { ProviderDirectory, type SlugCache } from '../policy/slugs';
import { capturedChatRequest } from '../upstream/rerun';
import { parseTarget, runRequest, type RunContext } from '../upstream/run';
import { lastVerdict, type CheckResult, type SampleResult, type Verdict, type WatchCase, type WatchList } from './list';

export { lastVerdict, withResult } from './list';

/**
 * Where a capture's re-checks go: its recorded pin or re-run target, the request's own pin, its SGLang route, or
 * (an agent's unpinned OpenRouter request) the provider that served it, by its OpenRouter slug from `slugs`
 * (derived from the name when no listing named it: `ProviderDirectory.slugOf`).
 */
export function targetOf(
  x: CapturedExchange,
  body: Record<string, unknown>,
  slugs: ProviderDirectory = new ProviderDirectory(),
): string | undefined {
  if (x.target?.startsWith('openrouter:') || x.target?.startsWith('sglang')) return x.target;
  const pin = x.pin?.requested[0];
  if (pin) return `openrouter:${pin}`;
  const provider = body.provider as { only?: unknown; order?: unknown } | undefined;
  const listed = [provider?.only, provider?.order].find((v): v is string[] => Array.isArray(v) && typeof v[0] === 'string');
  if (listed && x.route !== 'sglang') return `openrouter:${listed[0]}`;
  if (x.route === 'sglang') {
    try {
      return `sglang:${new URL(x.upstreamUrl).origin}`;
    } catch {
      return undefined;
    }
  }
  const served = servedOf(x);
  if (served && isOpenRouter(x.route, x.upstreamUrl)) return `openrouter:${slugs.slugOf(served).slug}`;
  return undefined;
}

/** The provider that served a capture (display name), as OpenRouter named it. */
export function servedOf(x: CapturedExchange): string | undefined {
  return x.servedProvider ?? x.summary?.provider;
}

/**
 * A new case from a stored capture (`idOrPrefix`); `target` overrides where it is re-checked. `slugs`: OpenRouter's
 * provider slugs (default: the store's), for a target taken from the served provider.
 */
export function caseFromCapture(
  reader: CaptureReader,
  idOrPrefix: string,
  opts: { target?: string; source?: string; slugs?: ProviderDirectory } = {},
): Omit<WatchCase, 'id' | 'history'> {
  const { id, body } = capturedChatRequest(reader, idOrPrefix);
  const x = findCapture(reader, id);
  const res = reader.readResponse(id);
  if (x.status === undefined || !res) throw new UserError(`capture ${id} has no response to compare re-checks with`);
  const findings = resultFor(reader, x, res.bytes, res.chunks).analysis.findings;
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length === 0) throw new UserError(`capture ${id} has no error finding: there is nothing to watch`);
  const slugs = opts.slugs ?? new ProviderDirectory((reader as Partial<SlugCache>).providerSlugs?.() ?? []);
  const target = opts.target ?? targetOf(x, body, slugs);
  if (!target)
    throw new UserError(`capture ${id} names no provider pin and no served provider; pass --target openrouter:SLUG (or sglang:URL)`);
  // The model: the request's, else the one the capture recorded (the re-checks send it).
  const model = typeof body.model === 'string' ? body.model : (x.summary?.model ?? x.requestModel);
  parseTarget(target); // a clear error now, not at the first re-check
  return {
    addedAt: Date.now(),
    captureId: id,
    source: opts.source ?? 'capture',
    request: model && body.model === undefined ? { ...body, model } : body,
    target,
    ...(model && { model }),
    rules: [...new Set(errors.map((f) => f.rule))],
    findings: errors.map((f) => `${f.rule}: ${f.message}`.slice(0, 300)),
    firstBrokenAt: x.startedAt,
    lastBrokenAt: x.startedAt,
  };
}

/** The verdict of N samples against the rules the case broke. */
export function verdictOf(rules: string[], samples: SampleResult[]): Verdict {
  if (samples.length === 0) return 'unchecked';
  const broken = samples.filter((s) => !s.ok || s.errorRules.length > 0);
  if (broken.length === 0) return 'fixed';
  return broken.some((s) => s.errorRules.some((r) => rules.includes(r))) ? 'still-broken' : 'broken-differently';
}

export interface CheckContext extends Omit<RunContext, 'store' | 'parentId'> {
  store: CaptureStore;
  samples?: number;
}

/** Re-checks one case: N samples on its target, one after another. A target that cannot be used at all is `unchecked`. */
export async function checkCase(c: WatchCase, ctx: CheckContext): Promise<CheckResult> {
  const n = ctx.samples ?? 1;
  const samples: SampleResult[] = [];
  const at = Date.now();
  const parentId = ctx.store.get(c.captureId) ? c.captureId : undefined;
  try {
    const target = parseTarget(c.target);
    for (let i = 0; i < n; i++) {
      const o = await runRequest(target, c.request, { ...ctx, store: ctx.store, parentId });
      if (o.cancelled) break;
      const errorRules = [...new Set((o.analysis?.findings ?? []).filter((f) => f.severity === 'error').map((f) => f.rule))];
      samples.push({
        ok: o.ok,
        errorRules,
        ...(o.exchangeId && { exchangeId: o.exchangeId }),
        ...(o.error && { error: o.error }),
        ...(o.servedProvider && { servedProvider: o.servedProvider }),
      });
    }
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    return { at, verdict: 'unchecked', samples, reason: e.message };
  }
  return { at, verdict: verdictOf(c.rules, samples), samples };
}

/** Re-checks every case (or those named), saving each result as it comes. */
export async function runWatch(
  list: WatchList,
  ctx: CheckContext & { ids?: string[]; onResult?: (c: WatchCase, r: CheckResult, previous: Verdict | undefined) => void },
): Promise<{ case: WatchCase; result: CheckResult; previous: Verdict | undefined }[]> {
  const cases = list.list().filter((c) => !ctx.ids?.length || ctx.ids.includes(c.id));
  for (const id of ctx.ids ?? [])
    if (!cases.some((c) => c.id === id)) throw new UserError(`no watched case "${id}" (\`tokenscope watch list\` shows them)`);
  const out = [];
  for (const c of cases) {
    if (ctx.signal?.aborted) break;
    const previous = lastVerdict(c);
    const result = await checkCase(c, ctx);
    // Appended in one transaction: a re-check in another process at the same time loses nothing.
    const updated = list.record(c.id, result);
    if (!updated) continue; // removed meanwhile
    ctx.onResult?.(updated, result, previous);
    out.push({ case: updated, result, previous });
  }
  return out;
}

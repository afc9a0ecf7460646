/**
 * Builds the webview's plain-JSON view of one exchange from the core's records. Pure (no `vscode` import).
 * Also maps finding offsets to line/column in the raw-stream document the Problems panel points at.
 */
import type { ExchangeAnalysis } from '../core/analyze';
import { exchangeModel, exchangeProvider } from '../core/capture/describe';
import { maskedSummary } from '../core/capture/masking';
import type { RuleInfo } from '../core/checks/index';
import { repairSummary } from '../core/repair/describe';
import { exchangePolicy } from '../core/policy/describe';
import type { ProviderDirectory } from '../core/policy/slugs';
import type { CapturedExchange, ChunkTiming, NormalizedRequest, ParsedResponse, Severity } from '../core/model';
import type { TokenAccounting } from '../core/tokens/accounting';
import type { TokenStream } from '../core/tokens/stream';
import { SEGMENT_KINDS as CORE_SEGMENT_KINDS, TOKEN_KINDS as CORE_TOKEN_KINDS, tableOf, type TokenTable } from '../core/tokens/table';
import { familyName } from '../core/checks/scan';
import { turnReport, type ParsedCall, type ProviderCall, type TurnReport } from '../core/parsed';
import {
  SEGMENT_KINDS,
  TOKEN_KINDS,
  type ExchangeView,
  type FindingView,
  type ParsedCallView,
  type ParsedView,
  type RequestView,
  type ResponseView,
  type TokenStreamView,
  type WireEventView,
  type WireView,
  WIRE_SHOWN,
} from '../../webview/protocol';
import { eventCount } from '../core/wire/common';
import { usageText } from '../core/cost';

const BODY_KEYS_SHOWN_ELSEWHERE = new Set(['messages', 'tools', 'input', 'system', 'model', 'stream', 'provider', 'functions']);

export function requestView(req: NormalizedRequest): RequestView {
  const params: Record<string, unknown> = {};
  if (req.raw && typeof req.raw === 'object') {
    for (const [k, v] of Object.entries(req.raw as Record<string, unknown>)) if (!BODY_KEYS_SHOWN_ELSEWHERE.has(k)) params[k] = v;
  }
  return { model: req.model, stream: req.stream, messages: req.messages, tools: req.tools, params, provider: req.provider };
}

export function responseView(res: ParsedResponse): ResponseView {
  return {
    message: res.message,
    finishReason: res.finishReason,
    nativeFinishReason: res.nativeFinishReason,
    usage: res.usage,
    usageText: usageText(res.usage),
    error: res.error,
    terminated: res.terminated,
    wireIssues: res.wireIssues.map((w) => ({ code: w.code, message: w.message })),
  };
}

/** Wire events with inter-event gaps (timestamps are ms since the first response byte). */
export function wireEvents(res: ParsedResponse): WireEventView[] {
  return wireView(res, 0, Infinity).events;
}

/**
 * The Wire tab's data: the first `shown` events with their gaps, the count and the longest gap over all of them.
 * Only the events shown become view objects: a 200,000-event stream costs WIRE_SHOWN of them, not one per event.
 */
export function wireView(res: ParsedResponse | undefined, chunkCount: number, shown = WIRE_SHOWN): WireView {
  const events: WireEventView[] = [];
  let longestGapMs = 0;
  let longestGapAt: number | undefined;
  let prev: number | undefined;
  const all = res?.events ?? [];
  for (let i = 0; i < all.length; i++) {
    const e = all[i];
    const gap = e.t !== undefined && prev !== undefined ? e.t - prev : undefined;
    if (e.t !== undefined) prev = e.t;
    if (gap !== undefined && gap > longestGapMs) (longestGapMs = gap), (longestGapAt = i);
    if (events.length < shown) events.push({ t: e.t, gap, event: e.event, data: e.data, comment: e.comment });
  }
  return { events, eventCount: res ? eventCount(res) : 0, longestGapMs, chunkCount, ...(longestGapAt !== undefined && { longestGapAt }) };
}

/** The same text as one flat string (a copy: a string joined from pieces costs a node per piece until then). */
function flatText(s: string | undefined): string | undefined {
  return s === undefined || s.length < 1024 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/**
 * The result a panel keeps once its view is built: a streamed response without its wire events (the view holds the
 * ones the Wire tab shows; the tokenizer reads the response without them). On a 200,000-event stream the events are
 * most of what an open exchange costs the extension host. The result is the caller's own (parsed for this view).
 */
export function withoutWireEvents(result: ExchangeAnalysis): ExchangeAnalysis {
  const r = result.response;
  if (!r.streamed || r.events.length === 0) return result;
  // A text appended delta by delta is, until something reads it whole, a tree of one node per delta (32 bytes
  // each): as much again as the events. Flattened in place, so the view, which shows the same message, shares it.
  const m = r.message;
  m.content = flatText(m.content);
  m.reasoning = flatText(m.reasoning);
  for (const c of m.toolCalls) c.arguments = flatText(c.arguments)!;
  const lean: ParsedResponse = { ...r, events: [], eventCount: eventCount(r) };
  // The checks' context refers to the same response (its parse stays lazy: the context object is kept, not copied).
  if (result.ctx?.response === r) result.ctx.response = lean;
  return { ...result, response: lean };
}

export function findingViews(result: ExchangeAnalysis | undefined, ruleInfo?: (id: string) => RuleInfo | undefined): FindingView[] {
  return (result?.analysis.findings ?? []).map((f) => {
    const info = ruleInfo?.(f.rule);
    return { ...f, title: info?.title, why: info?.why };
  });
}

function worst(findings: readonly { severity: Severity }[]): Severity | undefined {
  if (findings.some((f) => f.severity === 'error')) return 'error';
  if (findings.some((f) => f.severity === 'warning')) return 'warning';
  return findings.length ? 'info' : undefined;
}

function ms(n: number | undefined): string | undefined {
  return n === undefined ? undefined : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`;
}

export interface ExchangeInput {
  exchange: CapturedExchange;
  chunks: ChunkTiming[];
  /** The full analysis, or why it could not run. */
  result?: ExchangeAnalysis;
  unavailable?: string;
  ruleInfo?: (id: string) => RuleInfo | undefined;
  /** OpenRouter provider slugs known (whether the served provider honoured a policy is judged by slug). */
  slugs?: ProviderDirectory;
}

export function exchangeView({ exchange: x, chunks, result, unavailable, ruleInfo, slugs }: ExchangeInput): ExchangeView {
  const findings = findingViews(result, ruleInfo);
  const res = result?.response;
  const model = res?.model ?? exchangeModel(x);
  const provider = res?.provider ?? exchangeProvider(x);
  const policy = exchangePolicy(x, slugs);
  const meta: { label: string; value: string | undefined }[] = [
    { label: 'Model', value: model },
    { label: 'Provider', value: provider },
    {
      label: 'Finish',
      value: res?.finishReason
        ? `${res.finishReason}${res.nativeFinishReason && res.nativeFinishReason !== res.finishReason ? ` (native: ${res.nativeFinishReason})` : ''}`
        : undefined,
    },
    { label: 'Status', value: x.status !== undefined ? `HTTP ${x.status} · ${x.state}` : x.state },
    { label: 'Route', value: `${x.method} ${x.path} → ${x.upstreamUrl}` },
    { label: 'Agent', value: x.agent },
    { label: 'Time to first byte', value: ms(x.ttfbMs) },
    { label: 'Duration', value: ms(x.endedAt !== undefined ? x.endedAt - x.startedAt : undefined) },
    { label: 'Usage', value: usageText(res?.usage) },
    { label: 'Response size', value: x.responseBytes !== undefined ? `${x.responseBytes} bytes in ${chunks.length} chunks` : undefined },
    { label: 'Family', value: result?.analysis.family },
    { label: 'Pin', value: x.pin ? `${x.pin.requested.join(', ')}${x.pin.honoured === false ? ' (NOT honoured)' : ''}` : undefined },
    { label: 'Re-run of', value: x.parentId ? `${x.parentId}${x.target ? ` on ${x.target}` : ''}` : undefined },
    { label: 'Repaired', value: x.repair && `${repairSummary(x.repair)} (findings are on the upstream's bytes)` },
    { label: 'Masked', value: x.masked && maskedSummary(x.masked) },
    { label: 'Policy', value: policy?.summary },
    { label: 'Error', value: x.error },
  ];
  return {
    id: x.id,
    title: [model ?? 'exchange', provider, policy?.word].filter(Boolean).join(' · '),
    meta: meta.filter((m): m is { label: string; value: string } => m.value !== undefined && m.value !== ''),
    worst: worst(findings),
    findings,
    native: result ? { text: result.analysis.native.text, source: result.analysis.native.source } : undefined,
    request: result?.request ? requestView(result.request) : undefined,
    response: res ? responseView(res) : undefined,
    wire: wireView(res, chunks.length),
    parsed: result?.ctx ? parsedView(turnReport(result.analysis, result.ctx), res?.message) : undefined,
    unavailable,
    ...(x.repair && { repaired: repairSummary(x.repair) }),
  };
}

const SOURCE_TEXT: Record<ParsedView['source'], string> = {
  raw: 'Parsed from the raw model output.',
  logprobs: "Parsed from the output the response's logprobs spell, markers included.",
  reconstruction:
    "Only the structured response is known: the parse is the provider's calls plus any call whose markup leaked into content.",
};
const MISMATCH_TEXT = {
  dropped: 'not in the provider’s tool_calls',
  'arguments-changed': 'arguments changed by the provider',
  'not-in-text': 'not in the model’s text',
} as const;

function callView(c: ParsedCall | ProviderCall): ParsedCallView {
  const v: ParsedCallView = { index: c.index, name: c.name, arguments: c.arguments, complete: 'complete' in c ? c.complete : true };
  if (c.id !== null) v.id = c.id;
  if (c.argumentsJson !== null) v.argumentsPretty = JSON.stringify(c.argumentsJson, null, 2);
  if ('start' in c && c.start !== null && c.end !== null) Object.assign(v, { start: c.start, end: c.end });
  return v;
}

/** The Parsed tab's data: the parse and the provider's structured turn, each call marked with how it differs. */
export function parsedView(r: TurnReport, delivered?: { content?: string; reasoning?: string }): ParsedView {
  const calls = r.calls.map(callView);
  const provider = r.providerCalls
    ? { content: delivered?.content, reasoning: delivered?.reasoning, calls: r.providerCalls.map(callView) }
    : undefined;
  for (const m of r.mismatches) {
    if (m.parsedIndex !== undefined && calls[m.parsedIndex])
      calls[m.parsedIndex].mismatch = MISMATCH_TEXT[m.kind === 'arguments-changed' ? 'arguments-changed' : 'dropped'];
    if (m.providerIndex !== undefined && provider?.calls[m.providerIndex])
      provider.calls[m.providerIndex].mismatch = MISMATCH_TEXT[m.kind === 'arguments-changed' ? 'arguments-changed' : 'not-in-text'];
  }
  return {
    source: r.source,
    sourceText: SOURCE_TEXT[r.source],
    family: r.family ? familyName(r.family) : undefined,
    content: r.content ?? undefined,
    reasoning: r.reasoning ?? undefined,
    calls,
    provider,
    mismatches: r.findings.filter((f) => f.rule === 'provider-parse-mismatch').map((f) => String(f.message)),
  };
}

/** Zero-based line/character of a UTF-16 offset in `text` (what vscode.Position takes). */
export function positionAt(text: string, offset: number): { line: number; character: number } {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < clamped; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, character: clamped - lineStart };
}

/** The range a finding marks in the native text; a missing marker marks one character at its expected place. */
export function findingRange(f: FindingView, textLength: number): { start: number; end: number } {
  if (f.start !== undefined) return { start: f.start, end: Math.max(f.start, f.end ?? f.start) };
  if (f.expectedAt !== undefined) return { start: Math.max(0, f.expectedAt - 1), end: f.expectedAt };
  return { start: 0, end: Math.min(1, textLength) };
}

const SEGMENT_INDEX = new Map(SEGMENT_KINDS.map((k, i) => [k, i]));
const KIND_INDEX = new Map<string, number>(TOKEN_KINDS.map((k, i) => [k, i]));

/**
 * A core token stream → the webview's columns. Findings carry their token placement and rule help. A table (the
 * worker's columns) is read as it is; a stream of token objects is put in columns first.
 */
export function tokenStreamView(s: TokenStream | TokenTable, ruleInfo?: (id: string) => RuleInfo | undefined): TokenStreamView {
  const stream = 'columns' in s ? s : tableOf(s);
  const c = stream.columns;
  const n = c.length;
  const view: TokenStreamView = {
    tokenizer: stream.tokenizer,
    source: stream.source,
    ids: Array.from(c.ids.subarray(0, n)),
    texts: new Array(n),
    starts: Array.from(c.starts.subarray(0, n)),
    ends: Array.from(c.ends.subarray(0, n)),
    kinds: Array.from(c.kinds.subarray(0, n), (k) => KIND_INDEX.get(CORE_TOKEN_KINDS[k]) ?? 0),
    segments: Array.from(c.segments.subarray(0, n), (k) => SEGMENT_INDEX.get(CORE_SEGMENT_KINDS[k] ?? 'none') ?? 0),
    accounting: accountingRows(stream.accounting, n),
    count: stream.accounting.counted,
    countMeaning: COUNT_MEANING,
    findings: stream.findings.map((tf) => {
      const info = ruleInfo?.(tf.finding.rule);
      return { ...tf.finding, title: info?.title, why: info?.why, tokens: tf.tokens, expectedBefore: tf.expectedBefore };
    }),
  };
  for (let i = 0; i < n; i++) {
    const label = c.labels[c.label[i]];
    // Whole characters go raw (the view shows whitespace on demand); partial bytes keep the core's `\xNN` label.
    view.texts[i] = label.bytes || CORE_TOKEN_KINDS[c.kinds[i]] === 'special' ? label.text : stream.text.slice(c.starts[i], c.ends[i]);
  }
  return view;
}

/** What the token view's one count counts (the tab's badge, the toolbar and the Counted row give the same number). */
export const COUNT_MEANING = 'completion tokens as the model emitted them (what providers bill as completion_tokens)';

/**
 * `shown`: the pieces the view draws. They differ from `counted` where the provider spelled a marker out as text (drawn
 * as its text pieces, counted once, as the special token the model emitted), or where a structured response implies an
 * end-of-turn token that no text holds (counted, not drawn).
 */
function accountingRows(a: TokenAccounting, shown: number): { label: string; value: string }[] {
  const drawn =
    a.counted === shown
      ? ''
      : shown > a.counted
        ? `; ${shown} pieces drawn: a marker spelled out as text is drawn as its text pieces and counted once, as the special token the model emitted`
        : `; ${shown} drawn: the end of the turn a structured response implies is counted, not drawn`;
  const rows = [{ label: 'Counted', value: `${a.counted} completion tokens (${a.countedReasoning} in reasoning)${drawn}` }];
  if (a.billed !== undefined) {
    const delta = a.delta !== undefined ? ` (${a.delta > 0 ? '+' : ''}${a.delta} counted vs billed)` : '';
    rows.push({
      label: 'Billed',
      value: `${a.billed} completion tokens${a.billedReasoning !== undefined ? `, ${a.billedReasoning} reasoning` : ''}${delta}`,
    });
  } else rows.push({ label: 'Billed', value: 'not reported by the upstream' });
  if (a.mismatch) rows.push({ label: 'Accounting', value: 'MISMATCH: see the token-accounting finding' });
  const p = a.prompt;
  if (p) {
    const billed = p.billed === undefined ? 'no prompt usage reported' : `${p.billed} billed (${p.delta! > 0 ? '+' : ''}${p.delta})`;
    rows.push({
      label: 'Prompt',
      value: `${p.counted} tokens in the model's chat template, ${billed}${p.mismatch ? '. MISMATCH: see the prompt-token-mismatch finding' : ''}`,
    });
  } else if (a.promptNote) rows.push({ label: 'Prompt', value: `not rendered: ${a.promptNote}` });
  return rows;
}

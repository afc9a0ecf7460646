/**
 * The Markdown issue body: what an agent, provider or engine maintainer needs in one paste — the environment, the
 * smallest excerpt of the model's output that shows the failure with its markers visible (and, for a missing
 * marker, where it should have been), expected against actual, the findings with why they matter, and how to
 * reproduce it. Model output is untrusted: it only ever appears inside code fences or escaped.
 */
import { ruleInfo } from '../checks/index';
import { verdictSources, verdictsFor } from '../checks/engine-verdicts';
import { ENGINE_NAMES } from '../families/shared/verdicts';
import type { Finding, RawEvent } from '../model';
import { formatCost } from '../cost';
import { plural } from '../tokens/accounting';
import { bodyNotKeptLine, curlCommand, guessLine, REQUEST_BODY_ENV, rerunCommand } from './curl';
import { sealExport } from './redaction';
import { facts, isOpenRouter, replayPin, type Repro, type ReproFacts } from './repro';

/** Characters of native text shown before the failure, and after it. */
const BEFORE = 240;
const AFTER = 120;
/** A finding longer than this is shown as its first and last EDGE characters. */
const MAX_SPAN = 1200;
const EDGE = 400;
/** Raw events shown from the end of the stream, and the length each is cut to. */
const TAIL_EVENTS = 4;
const EVENT_CHARS = 400;

/** Where a missing marker should have been, shown inside the excerpt. */
export function ghost(marker: string): string {
  return `⟦missing here: ${marker}⟧`;
}

/** A fence longer than any backtick run in the text, so model output can never close it. */
function fenced(text: string, info = ''): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${text}\n${fence}`;
}

/** Escapes text for Markdown prose (and table cells): no HTML, no table breaks, one line, control characters visible. */
function esc(s: string): string {
  return s
    .replace(/\r?\n/g, ' ')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|');
}

/** Inline code that survives backticks in the value; in a table cell, pipes are escaped (GFM reads them there). */
function code(s: string, cell = false): string {
  const one = s.replace(/\r?\n/g, ' ');
  const longest = Math.max(0, ...[...one.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  const pad = one.startsWith('`') || one.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${cell ? one.replace(/\|/g, '\\|') : one}${pad}${ticks}`;
}

/** Inline code in a table cell. */
const cell = (s: string): string => code(s, true);

export interface Excerpt {
  /** The excerpt, with a ghost marker where a missing marker belongs. */
  text: string;
  /** Offsets of the excerpt in the native text. */
  start: number;
  end: number;
  /** True when the excerpt starts after / ends before the native text's ends. */
  cutBefore: boolean;
  cutAfter: boolean;
}

/** The smallest stretch of native text around a finding: its range, a lead-in before it, a little after. */
export function excerptAround(text: string, f: Finding): Excerpt | undefined {
  if (f.start === undefined && f.expectedAt === undefined) return undefined;
  const from = Math.min(f.start ?? f.expectedAt!, f.expectedAt ?? Infinity);
  const to = Math.max(f.end ?? from, f.expectedAt ?? 0);
  let start = Math.max(0, from - BEFORE);
  let end = Math.min(text.length, to + AFTER);
  // Start on a line boundary (else a word boundary) inside the lead-in, and end with the failure's line.
  if (start > 0) {
    const nl = text.indexOf('\n', start - 1);
    const sp = text.indexOf(' ', start);
    if (nl >= 0 && nl < from) start = nl + 1;
    else if (sp >= 0 && sp < from) start = sp + 1;
  }
  const nlAfter = text.indexOf('\n', to);
  if (nlAfter >= 0 && nlAfter < end) end = nlAfter;
  // A long finding (a section of many calls) keeps its beginning and its end; the middle is elided.
  const kept: [number, number][] =
    to - from > MAX_SPAN
      ? [
          [start, from + EDGE],
          [to - EDGE, end],
        ]
      : [[start, end]];
  const body = kept
    .map(([a, b]) => {
      const piece = text.slice(a, b);
      if (f.expectedAt === undefined || !f.expectedMarker || f.expectedAt < a || f.expectedAt > b) return piece;
      return piece.slice(0, f.expectedAt - a) + ghost(f.expectedMarker) + piece.slice(f.expectedAt - a);
    })
    .join(kept.length > 1 ? `\n… ${plural(kept[1][0] - kept[0][1], 'character')} …\n` : '');
  return { text: body, start, end, cutBefore: start > 0, cutAfter: end < text.length };
}

/** A non-streamed body (an error JSON, a whole completion), cut like one long event. */
function bodyText(events: RawEvent[]): string | undefined {
  const body = events.find((e) => !e.comment)?.data;
  if (!body) return undefined;
  return body.length > EVENT_CHARS ? `${body.slice(0, EVENT_CHARS)}… (${body.length - EVENT_CHARS} more characters)` : body;
}

function streamTail(events: RawEvent[]): string | undefined {
  const data = events.filter((e) => !e.comment);
  if (data.length === 0) return undefined;
  const shown = data.slice(-TAIL_EVENTS).map((e) => {
    const line = `${e.event ? `event: ${e.event}\n` : ''}data: ${e.data}`;
    return line.length > EVENT_CHARS ? `${line.slice(0, EVENT_CHARS)}… (${line.length - EVENT_CHARS} more characters)` : line;
  });
  const skipped = data.length - shown.length;
  return (skipped > 0 ? `… ${skipped} earlier events\n\n` : '') + shown.join('\n\n');
}

function titleOf(r: Repro, f: ReproFacts): string {
  const what = f.primary ? (ruleInfo(f.primary.rule)?.title ?? f.primary.rule) : 'Exchange report';
  const model = f.servedModel ?? f.model;
  const via = [f.provider, isOpenRouter(r.exchange) ? 'OpenRouter' : undefined].filter(Boolean).join(' via ');
  return [what, model ? `— ${model}` : '', via ? `(${via})` : ''].filter(Boolean).join(' ');
}

function environment(r: Repro, f: ReproFacts): string {
  const x = r.exchange;
  const rows: [string, string][] = [];
  if (f.agent) {
    const name = [f.agent.name, f.agent.version].filter(Boolean).join(' ');
    rows.push(['Agent', [name ? esc(name) : 'unknown', f.agent.userAgent ? cell(f.agent.userAgent) : ''].filter(Boolean).join(' — ')]);
  }
  if (f.model) rows.push(['Model requested', cell(f.model)]);
  if (f.servedModel && f.servedModel !== f.model) rows.push(['Model served', cell(f.servedModel)]);
  if (f.provider || isOpenRouter(x)) {
    const pin = x.pin
      ? ` — pin requested: ${x.pin.requested.map((s) => cell(s)).join(', ')}${x.pin.honoured === false ? ' (not honoured)' : x.pin.honoured ? ' (honoured)' : ''}`
      : '';
    rows.push(['Provider served', `${f.provider ? esc(f.provider) : 'unknown'}${isOpenRouter(x) ? ' (through OpenRouter)' : ''}${pin}`]);
  }
  if (f.engine) rows.push(['Engine', esc(f.engine)]);
  // The upstream's own host and path (`x.path` is the path the agent called on the proxy, `/openrouter/v1/…`);
  // the query is left out: it is no part of the failure and may carry a key.
  let target = x.upstreamUrl;
  try {
    const u = new URL(x.upstreamUrl);
    target = u.host + u.pathname;
  } catch {
    // keep the text as captured
  }
  rows.push(['Upstream', `${cell(`${x.method} ${target}`)}${x.status !== undefined ? ` → ${x.status}` : ''}`]);
  if (f.protocol) rows.push(['API', `${esc(f.protocol)}${f.streamed ? ', streamed' : ''}`]);
  if (f.finishReason || f.nativeFinishReason) {
    rows.push([
      'Finish reason',
      `${f.finishReason ? cell(f.finishReason) : 'none'}${f.nativeFinishReason ? ` (native ${cell(f.nativeFinishReason)})` : ''}`,
    ]);
  }
  if (f.usage) {
    const u = f.usage;
    // Reasoning tokens are part of the completion tokens (`completion_tokens_details`), not added to them.
    const reasoning = u.reasoningTokens !== undefined ? `${u.reasoningTokens} reasoning` : '';
    const parts = [
      u.promptTokens !== undefined ? `${u.promptTokens} prompt` : '',
      u.completionTokens !== undefined ? `${u.completionTokens} completion${reasoning ? ` (${reasoning})` : ''}` : reasoning,
    ].filter(Boolean);
    rows.push(['Usage', `${parts.join(' + ')} tokens${u.cost !== undefined ? `, ${formatCost(u.cost)}` : ''}`]);
  }
  if (r.tokens) {
    const a = r.tokens.accounting;
    const billed = a.billed !== undefined ? `, billed ${a.billed}${a.mismatch ? ' (mismatch)' : ''}` : '';
    rows.push(['Tokens', `${plural(a.counted, 'completion token')} counted with ${esc(r.tokens.tokenizer)}${billed}`]);
  }
  if (x.generationId) rows.push(['Generation id', cell(x.generationId)]);
  rows.push(['Captured', new Date(x.startedAt).toISOString()]);
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

function expectedActual(f: ReproFacts): string | undefined {
  const p = f.primary;
  if (!p) return undefined;
  const expected = p.expectedMarker
    ? `${code(p.expectedMarker)} at offset ${p.expectedAt}${p.start !== undefined ? `, closing what opened at offset ${p.start}` : ''}${
        f.callsAttempted > 0
          ? `; the tool call${f.callsAttempted > 1 ? 's' : ''} delivered to the agent with finish_reason ${code('tool_calls')}`
          : ''
      }.`
    : `a well-formed response, on which Tokenscope's ${code(p.rule)} check (${esc(ruleInfo(p.rule)?.title ?? p.rule)}) stays silent.`;
  // The finding's message, then how the turn ended and, when the model wrote tool calls, how many got through.
  const finish = f.finishReason ? `the response finished with ${code(f.finishReason)}` : '';
  const calls =
    f.callsAttempted > 0
      ? `${f.callsDelivered} of ${plural(f.callsAttempted, 'tool call')} the model wrote reached the agent as a structured call`
      : '';
  const outcome = [finish, calls].filter(Boolean).join('; ');
  const actual = `${esc(p.message)}${/[.!?)]$/.test(p.message) ? '' : '.'}${outcome ? ` ${outcome[0].toUpperCase()}${outcome.slice(1)}.` : ''}`;
  return [`- **Expected:** ${expected}`, `- **Actual:** ${actual}`].join('\n');
}

function findingsTable(findings: Finding[]): string {
  const rows = findings.map((d) => {
    const info = ruleInfo(d.rule);
    return `| ${d.severity} | ${cell(d.rule)} | ${esc(d.location)} | ${esc(d.message)} | ${esc(info?.why ?? '')} |`;
  });
  return ['| Severity | Rule | Where | Finding | Why it breaks agents |', '|---|---|---|---|---|', ...rows].join('\n');
}

/**
 * For each conformance class the findings belong to: what vLLM, SGLang and Dynamo do with it, with the sources. This
 * tells a maintainer whether the fault is the model's, the provider's engine's, or the agent's.
 */
function engineSection(r: Repro, findings: Finding[]): string | undefined {
  const ctx = r.analysis.ctx;
  if (!ctx) return undefined;
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const finding of findings) {
    const v = verdictsFor(ctx, finding);
    if (!v || seen.has(`${v.family} ${v.case}`)) continue;
    seen.add(`${v.family} ${v.case}`);
    const rows = v.engines.map(
      (e) => `| ${esc(ENGINE_NAMES[e.engine])} | ${esc(e.release)} | ${cell(e.parser)} | ${esc(e.outcome)} | ${esc(e.text)} |`,
    );
    parts.push(
      `${code(finding.rule)} is conformance case ${esc(v.case)} (${esc(v.what)}):`,
      ['| Engine | Release | Parser | Outcome | What happens |', '|---|---|---|---|---|', ...rows].join('\n'),
      `Sources: ${verdictSources(v)
        .map((x) => esc(x))
        .join('; ')}.`,
    );
  }
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

/** The issue title and body. */
export function markdownIssue(r: Repro): { title: string; body: string } {
  const f = facts(r);
  const native = r.analysis.analysis.native;
  const sections: string[] = [];

  sections.push('### Environment', environment(r, f));

  const excerpt = f.primary ? excerptAround(native.text, f.primary) : undefined;
  if (excerpt) {
    const source =
      native.source === 'raw'
        ? 'the raw model output'
        : `the model's output${r.analysis.analysis.family ? ` in ${r.analysis.analysis.family} native form` : ''}, rebuilt from the stream's ${f.streamed ? 'deltas' : 'body'}`;
    const where = `offsets ${excerpt.start}–${excerpt.end} of ${native.text.length}`;
    const note = f.primary?.expectedMarker ? ` ${code(ghost(f.primary.expectedMarker))} marks where the missing marker belongs.` : '';
    sections.push(
      '### What the model sent',
      `Excerpt of ${source} (${where}) around the failure, markers as sent.${note}`,
      fenced(`${excerpt.cutBefore ? '…' : ''}${excerpt.text}${excerpt.cutAfter ? '…' : ''}`, 'text'),
    );
  }
  const events = r.analysis.response.events;
  const tail = f.streamed ? streamTail(events) : undefined;
  if (tail)
    sections.push(
      `End of the raw stream (${r.analysis.response.terminated ? 'terminated normally' : 'no terminal event'}):`,
      fenced(tail, 'text'),
    );
  // A non-streamed error body is where the upstream's own words are (OpenRouter's `metadata.raw`, the provider).
  const errorBody = !f.streamed && r.exchange.status !== undefined && r.exchange.status >= 400 ? bodyText(events) : undefined;
  if (errorBody)
    sections.push(`Response body (HTTP ${r.exchange.status}):`, fenced(errorBody, /^\s*[{[]/.test(errorBody) ? 'json' : 'text'));

  const ea = expectedActual(f);
  if (ea) sections.push('### Expected vs actual', ea);

  sections.push('### Findings', f.findings.length > 0 ? findingsTable(f.findings) : 'Tokenscope flagged nothing in this exchange.');
  const engines = engineSection(r, f.findings);
  if (engines) sections.push('### What the serving engines do with this', engines);

  const notKept = r.exchange.requestBody === undefined && r.exchange.requestNotKept;
  const reproduce = [
    '### Reproduce',
    `Replays the same request${isOpenRouter(r.exchange) ? ' pinned to the same provider' : ''}; the key comes from the environment.${
      notKept
        ? ` **Note:** ${esc(bodyNotKeptLine(notKept))}; the command reads it from the file named by ${code(`$${REQUEST_BODY_ENV}`)}.`
        : ''
    }`,
    fenced(curlCommand(r), 'sh'),
  ];
  const pin = isOpenRouter(r.exchange) ? replayPin(r) : undefined;
  if (pin?.derivedFrom) reproduce.splice(2, 0, `**${esc(guessLine({ ...pin, derivedFrom: pin.derivedFrom }))}**`);
  const rerun = rerunCommand(r);
  if (rerun) {
    reproduce.push(
      'With Tokenscope, from the repro bundle attached to this issue:',
      fenced(`tokenscope import repro.tokenscope.json   # prints the imported id\n${rerun.replace(r.exchange.id, 'ID')}`, 'sh'),
    );
  }
  sections.push(...reproduce);

  const redacted = r.redactions.reduce((n, x) => n + x.count, 0);
  sections.push(
    `<sub>Exported by Tokenscope ${esc(r.tokenscopeVersion)}${redacted > 0 ? `; ${plural(redacted, 'secret')} redacted` : ''}.</sub>`,
  );

  const opts = { patterns: r.patterns };
  return { title: sealExport(titleOf(r, f), opts), body: sealExport(sections.join('\n\n') + '\n', opts) };
}

/** The issue as one Markdown document: the title as a heading, then the body. */
export function writeMarkdown(r: Repro): string {
  const { title, body } = markdownIssue(r);
  return `## ${esc(title)}\n\n${body}`;
}

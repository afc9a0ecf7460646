/**
 * The repro bundle, `*.tokenscope.json`: one exchange with everything needed to see the failure again, offline.
 *
 * Schema, version 1 (every field not marked optional is always written):
 *
 *   {
 *     "format": "tokenscope.repro",
 *     "version": 1,
 *     "createdAt": "2026-11-30T03:00:00.000Z",        ISO 8601, when the bundle was written
 *     "tokenscope": { "version": "0.1.0" },            the Tokenscope that wrote it
 *     "agent": { "name", "userAgent", "version" },     optional: the agent that sent the request
 *     "exchange": CapturedExchange,                    src/core/model.ts, redacted; `requestBody` is the request body
 *     "response": {
 *       "encoding": "utf8" | "base64",                 how `body` holds the bytes
 *       "body": string,                                the decoded response body exactly as received
 *       "chunks": [{ "t", "offset", "length" }]        chunk timing (ms since the request started); tiles `body`
 *     },
 *     "served": { "provider", "model", "finishReason", "nativeFinishReason", "generationId", "pin",
 *                 "slug", "slugGuess" },            all optional; slug: the OpenRouter slug a replay pins,
 *                                                   slugGuess: why it is derived from the name (a guess)
 *     "usage": Usage,                                  optional
 *     "tools": ToolDef[],                              the tool schemas the request offered (normalized)
 *     "findings": [Finding & { "title", "why" }],      what Tokenscope flagged when the bundle was written
 *     "tokens": { "tokenizer", "source", "ids", "accounting" },   optional: the turn in the model's tokenizer
 *     "redactions": [{ "label", "where", "preview", "count" }]   what the export redacted
 *   }
 *
 * `exchange` and `response` are the source of truth: readers re-analyse them. `served`, `usage`, `tools` and
 * `findings` are a readable record for people and other tools. Readers ignore fields they do not know, so adding
 * a field keeps version 1; a change old readers would misread bumps `version`, and the reader
 * (../capture/bundle-read.ts, below the layers that read bundles as input) refuses newer ones.
 */
import { ruleInfo } from '../checks/index';
import type { CapturedExchange, ChunkTiming, ToolDef, Usage } from '../model';
import { encodeBody } from '../capture/body-text';
import { BUNDLE_FORMAT, BUNDLE_VERSION, type BundleAgent, type BundleFinding } from '../capture/bundle-read';
import type { TokenAccounting } from '../tokens/accounting';
import type { TokenStream } from '../tokens/stream';
import type { RedactionItem } from './redaction';
import { jsonText } from './json-text';
import { sealExport } from './redaction';
import { guessLine } from './curl';
import { facts, isOpenRouter, replayPin, type Repro } from './repro';

export interface ReproBundleV1 {
  format: typeof BUNDLE_FORMAT;
  version: 1;
  createdAt: string;
  tokenscope: { version: string };
  agent?: BundleAgent;
  exchange: CapturedExchange;
  response: { encoding: 'utf8' | 'base64'; body: string; chunks: ChunkTiming[] };
  served: {
    provider?: string;
    model?: string;
    finishReason?: string;
    nativeFinishReason?: string;
    generationId?: string;
    pin?: { requested: string[]; honoured?: boolean };
    /** The OpenRouter slug a replay pins (the served provider's, from OpenRouter's listings). */
    slug?: string;
    /** Present when `slug` is derived from the served provider's name: why no listing named it. */
    slugGuess?: string;
  };
  usage?: Usage;
  tools: ToolDef[];
  findings: BundleFinding[];
  tokens?: {
    tokenizer: string;
    /** `server` (the server's own ids), `reconstructed` (the structured response re-encoded), `text`. */
    source: TokenStream['source'];
    ids: number[];
    accounting: Omit<TokenAccounting, 'finding'>;
  };
  redactions: RedactionItem[];
}

/** Drops undefined fields so the file holds only what is known. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export interface WriteBundleOptions {
  /** Clock for `createdAt` (tests). */
  now?: () => Date;
}

function tokensOf(t: TokenStream): NonNullable<ReproBundleV1['tokens']> {
  const { finding: _finding, ...accounting } = t.accounting;
  return { tokenizer: t.tokenizer, source: t.source, ids: t.tokens.map((k) => k.id), accounting };
}

/** The bundle as a JSON text, redacted and sealed. */
export function writeBundle(r: Repro, opts: WriteBundleOptions = {}): string {
  const f = facts(r);
  const pin = isOpenRouter(r.exchange) ? replayPin(r) : undefined;
  const body = encodeBody(r.responseBody);
  const bundle: ReproBundleV1 = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    createdAt: (opts.now?.() ?? new Date()).toISOString(),
    tokenscope: { version: r.tokenscopeVersion },
    ...(f.agent ? { agent: compact(f.agent) } : {}),
    exchange: r.exchange,
    response: { encoding: body.encoding, body: body.text, chunks: r.chunks },
    served: compact({
      provider: f.provider,
      model: f.servedModel,
      finishReason: f.finishReason,
      nativeFinishReason: f.nativeFinishReason,
      generationId: r.exchange.generationId,
      pin: r.exchange.pin,
      slug: pin?.slug,
      slugGuess: pin?.derivedFrom ? guessLine({ ...pin, derivedFrom: pin.derivedFrom }) : undefined,
    }),
    ...(f.usage ? { usage: f.usage } : {}),
    tools: f.tools,
    findings: f.findings.map((x) => {
      const info = ruleInfo(x.rule);
      return compact({ ...x, title: info?.title, why: info?.why });
    }),
    ...(r.tokens ? { tokens: tokensOf(r.tokens) } : {}),
    redactions: r.redactions,
  };
  return sealExport(jsonText(bundle, 2) + '\n');
}

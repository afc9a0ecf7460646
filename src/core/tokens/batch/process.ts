/**
 * The work on one `tokens --batch` line, in a worker thread: the same path as the single-response `tokens`
 * command (tokenizer from the pool, `exchangeTokenTable`: the tokens in columns, never one object per token), plus
 * the prompt ids when the request is there, and the output record(s) as JSON lines. Everything returned is
 * structured-cloneable.
 */
import { formats, getFormat } from '../../families/index';
import { UserError, type FamilyId, type Finding } from '../../model';
import { exchangeTokenTable } from '../exchange';
import { emittedTableIds } from '../stream';
import { ColumnsBuilder } from '../table';
import type { DownloadProgress, HubOptions } from '../hub';
import { ChatTemplatePool, promptFor } from '../prompt';
import { TokenizerPool, type TokenizerRequest } from '../resolve';
import { parseBatchLine, type BatchSample } from './line';
import { specforgeRecord } from './specforge';

export interface BatchOptions {
  model?: string;
  family?: FamilyId;
  tokenizerDir?: string;
  /**
   * The folder of the tokenizers Tokenscope ships, as the runner found it: a worker's bundle may sit elsewhere than
   * the runner's (TOKENSCOPE_BATCH_WORKER), and the runner's rank-table hand-over is of the runner's folder.
   */
  bundledDir?: string;
  /** Data dir (Hub downloads and the Kimi rank cache). */
  cacheDir?: string;
  offline?: boolean;
  hub?: Omit<HubOptions, 'onProgress' | 'signal'>;
  /** Also write the SpecForge / EAGLE-3 conversation form. */
  specforge?: boolean;
}

/** What the summary needs from one processed line. */
export interface LineStats {
  dataset?: string;
  family?: string;
  tools: boolean;
  promptMarkup: boolean;
  contentMarkup: boolean;
  structuredCalls: boolean;
  completion: { counted: number; billed?: number };
  prompt?: { counted: number; billed?: number };
  /** Why there are no prompt ids (no request, no chat template…). */
  promptSkipped?: string;
  rules: string[];
}

export interface LineResult {
  line: number;
  /** The output JSON line (no newline). */
  out?: string;
  specforge?: string;
  stats?: LineStats;
  /** Why the line is bad (it has no output). */
  error?: string;
}

export interface ProcessorCallbacks {
  onProgress?: (p: DownloadProgress) => void;
  onWarning?: (message: string) => void;
}

export class BatchProcessor {
  private readonly tokenizers = new TokenizerPool();
  private readonly templates = new ChatTemplatePool();
  /** One set of columns for every line: a line's table is read before the next line is built, then dropped. */
  private readonly columns = new ColumnsBuilder(4096);

  constructor(
    private readonly opts: BatchOptions,
    private readonly callbacks: ProcessorCallbacks = {},
  ) {}

  async process(line: number, text: string): Promise<LineResult> {
    try {
      return await this.run(line, text);
    } catch (e) {
      const message = e instanceof UserError ? e.message : `internal error: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`;
      return { line, error: message };
    }
  }

  private async run(line: number, text: string): Promise<LineResult> {
    const sample = parseBatchLine(text);
    const { response, request } = sample;
    const o = this.opts;
    const model = o.model ?? response.model ?? request?.model;
    if (!model && !o.family && !o.tokenizerDir) throw new UserError('names no model: pass --model ID (or --tokenizer-dir DIR)');
    const req: TokenizerRequest = {
      model,
      family: o.family,
      tokenizerDir: o.tokenizerDir,
      bundledDir: o.bundledDir,
      cacheDir: o.cacheDir,
      offline: o.offline,
      hub: { ...o.hub, onProgress: this.callbacks.onProgress },
      onWarning: this.callbacks.onWarning,
    };
    const tokenizer = await this.tokenizers.get(req);
    const { prompt, note } = await promptFor(tokenizer, this.templates, req, sample.requestBody);
    const { table, analysis } = exchangeTokenTable({
      tokenizer,
      columns: this.columns,
      response,
      request,
      model,
      family: o.family,
      promptTokens: prompt?.ids.length,
      promptIds: prompt?.ids,
      promptNote: note,
    });
    const completionIds = Array.from(emittedTableIds(tokenizer, table));
    const a = table.accounting;
    const p = a.prompt;
    const record = {
      line,
      id: sample.id ?? null,
      model: model ?? null,
      family: analysis.family ?? null,
      ...(sample.dataset === undefined ? {} : { dataset: sample.dataset }),
      source: table.source,
      completion_ids: completionIds,
      prompt_ids: prompt?.ids ?? null,
      ...(note ? { prompt_skipped: note } : {}),
      accounting: {
        completion: {
          counted: a.counted,
          reasoning: a.countedReasoning,
          billed: a.billed ?? null,
          delta: a.delta ?? null,
          mismatch: a.mismatch,
        },
        prompt: p ? { counted: p.counted, billed: p.billed ?? null, delta: p.delta ?? null, mismatch: p.mismatch } : null,
      },
      findings: table.findings.map((f) => findingJson(f.finding)),
    };
    const stats: LineStats = {
      dataset: sample.dataset,
      family: analysis.family,
      tools: (request?.tools.length ?? 0) > 0,
      promptMarkup: promptHasMarkup(sample, analysis.family),
      contentMarkup: hasMarkup(response.message.content ?? '', analysis.family),
      structuredCalls: response.message.toolCalls.length > 0,
      completion: { counted: a.counted, billed: a.billed },
      prompt: p ? { counted: p.counted, billed: p.billed } : undefined,
      promptSkipped: note,
      rules: [...new Set(table.findings.map((f) => f.finding.rule))],
    };
    const result: LineResult = { line, out: JSON.stringify(record), stats };
    if (o.specforge && prompt) {
      result.specforge = JSON.stringify(specforgeRecord({ line, sample, promptIds: prompt.ids, completionIds, tokenizer }));
    }
    return result;
  }
}

function findingJson(f: Finding) {
  return { rule: f.rule, severity: f.severity, message: f.message };
}

function toolMarkersOf(family: FamilyId | undefined): readonly string[] {
  return family ? getFormat(family).toolMarkers : formats.flatMap((f) => f.toolMarkers);
}

function hasMarkup(text: string, family: FamilyId | undefined): boolean {
  return !!text && toolMarkersOf(family).some((m) => text.includes(m));
}

/**
 * Tool-call markup in the prompt: calls in the request's history (which the template renders as markup) or markers
 * in a message's text. Judged on the messages, not on the rendered prompt: some templates spell the markup in their
 * tool instructions (Qwen3: "within <tool_call></tool_call> XML tags"), which would count every prompt that offers
 * tools in one family and none in another.
 */
function promptHasMarkup(sample: BatchSample, family: FamilyId | undefined): boolean {
  const history = sample.request?.messages ?? [];
  return history.some((m) => (m.toolCalls?.length ?? 0) > 0 || hasMarkup(m.content ?? '', family));
}

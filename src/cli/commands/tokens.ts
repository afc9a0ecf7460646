import { defaultDataDir } from '../../core/capture/store';
import { formats } from '../../core/families/index';
import { UserError } from '../../core/model';
import { exchangeTokenTable } from '../../core/tokens/exchange';
import type { DownloadProgress } from '../../core/tokens/hub';
import { ChatTemplatePool, promptFor } from '../../core/tokens/prompt';
import { loadTokenizer, type TokenizerRequest } from '../../core/tokens/resolve';
import { batch, mergeSummaries } from './tokens-batch';
import { emittedTableIds } from '../../core/tokens/stream';
import { parseArgs } from '../args';
import { paletteOf, type CliIO, type Command } from '../io';
import { writeJson, writeText } from '../tokens-output';
import { loadTurnInput } from '../turn-input';

export { formatStream } from '../tokens-output';

const USAGE = `usage: tokenscope tokens [--model ID] [--tokenizer-dir DIR] [--data-dir DIR] [--request FILE] [--family F] [--offline] [--json] FILE
       tokenscope tokens --batch IN.jsonl|- --out OUT.jsonl|- [--shard K/N] [--summary-out FILE] [--workers N]
                         [--format specforge [--specforge-out FILE|-]] [--model ID] [--tokenizer-dir DIR] [--json]
       tokenscope tokens --merge-summaries A.json B.json … [--summary-out FILE] [--json]

Shows the token stream of one model response in the model's own tokenizer: every token with its id, special
tokens as one id, markers that came back spelled out as ordinary text, the segment each token belongs to, the
findings on their tokens, and the completion length against what the provider billed. FILE takes the same
inputs as \`lint\` (raw model text, a JSON response, an SSE dump, a repro bundle, a capture id).

Accounting counts every completion token, reasoning included, as providers bill usage.completion_tokens; a
marker the provider returned as text counts as the one special token the model emitted. A response cut short
(no terminal event, finish_reason missing, length or error) is shown up to where it stopped, without the
closing markers and end of turn the model never reached.

Tokens come from the server's own ids when the response carries them (SGLang output_ids, logprobs), else from
the structured response rendered in the family's format and encoded ("reconstructed"), else from the text.

  --model ID           model id (picks the tokenizer; e.g. moonshotai/kimi-k2-0905); default: the one FILE names
  --tokenizer-dir DIR  a folder with tiktoken.model + tokenizer_config.json (Kimi) or tokenizer.json
  --data-dir DIR       where downloaded tokenizers are kept, and the capture store for capture ids
                       (default: TOKENSCOPE_DATA_DIR or ~/.tokenscope)
  --request FILE       the request body (for the tool and history checks of the findings)
  --family F           force the family (${formats.map((f) => f.id).join(', ')})
  --offline            never download; use --tokenizer-dir, the Kimi K2 tokenizer Tokenscope ships, or an already
                       downloaded tokenizer
  --json               print {"source","tokenizer","family","tokens":[{id,text,kind,segment}],"ids","prompt","accounting",
                       "findings"}; "ids" is the completion as the model emitted it (a marker returned as text is
                       its one special id), the ids --batch writes as completion_ids

With the request (--request, or the one a capture or bundle holds), the prompt is rendered with the model's own chat
template (chat_template.jinja or tokenizer_config.json beside the tokenizer, downloaded like it) and encoded: the
exact prompt ids, counted against usage.prompt_tokens (rule prompt-token-mismatch).

Batch (a whole dataset): each line of IN.jsonl is a chat.completion (as OpenRouter returns it), a
{"request": …, "response": …} pair, or a repro bundle. OUT.jsonl gets one line per good input line, in input
order: {"line","id","model","family","source","completion_ids","prompt_ids","accounting","findings"}. Bad lines are
counted and reported by line number, never fatal. The summary (--json: as JSON) counts samples per "dataset"
field, tool-call markup in prompts, in completion content and as structured calls, the accounting against billed
usage, and findings by rule. Ctrl-C stops cleanly, and Ctrl-C again at once: OUT holds complete lines, a prefix.
  --batch IN.jsonl     the input file; - reads stdin
  --out OUT.jsonl      the output file (written 0600); - writes stdout, and the summary then goes to stderr, or
                       only to --summary-out
  --shard K/N          only the lines whose index (from 0) is K modulo N, under their input line numbers: N
                       processes given shards 0/N … N-1/N of one input write between them the lines one run writes
  --summary-out FILE   also write the summary as JSON to FILE (0600, whole or not at all): what --merge-summaries reads
  --workers N          worker threads (default: one per core)
  --format specforge   also write OUT's name with .specforge.jsonl: {"id","conversations","tools","input_ids",
                       "loss_mask"}, the form SpecForge / EAGLE-3 training reads, with the exact ids (prompt, then
                       completion; loss mask 1 over the completion); lines without prompt ids are left out of it
  --specforge-out FILE that file instead (- for stdout, when --out is a file); needed with --out -

Shards: --merge-summaries A.json B.json … folds the JSON summaries of every shard of one input into exactly the
summary one run over the whole input gives (a missing or repeated shard is an error). See docs/dataset-scale.md
for Spark and Ray Data.

Kimi K2's tokenizer ships with Tokenscope (it works offline). Other tokenizers not found locally are downloaded
once from the Hugging Face Hub (HF_ENDPOINT overrides the endpoint, HF_TOKEN is sent for gated repos).`;

const tokens: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: [
      'model',
      'tokenizer-dir',
      'data-dir',
      'request',
      'family',
      'batch',
      'out',
      'workers',
      'format',
      'shard',
      'summary-out',
      'specforge-out',
    ],
    booleans: ['json', 'offline', 'merge-summaries'],
  });
  if (args.bool('help')) {
    io.out(USAGE);
    return 0;
  }
  if (args.str('batch') !== undefined) return batch(args, io, progressReporter(io));
  if (args.bool('merge-summaries')) return mergeSummaries(args, io);
  for (const f of ['out', 'workers', 'format', 'shard', 'summary-out', 'specforge-out'])
    if (args.str(f) !== undefined) throw new UserError(`--${f} goes with --batch IN.jsonl`);
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const { input, request, family } = await loadTurnInput(args, dataDir);
  const model = args.str('model') ?? input.model ?? request?.model;
  if (!model && !family && !args.str('tokenizer-dir')) {
    throw new UserError(`${input.label} names no model: pass --model ID (or --tokenizer-dir DIR)`);
  }
  const req: TokenizerRequest = {
    model,
    family,
    tokenizerDir: args.str('tokenizer-dir'),
    cacheDir: dataDir,
    offline: args.bool('offline'),
    hub: { onProgress: progressReporter(io) },
    onWarning: (m) => io.err(`tokenscope tokens: ${m}`),
  };
  const tokenizer = await loadTokenizer(req);
  // The prompt side, when the request is there: a missing chat template is a note on stderr, not a failure.
  const { prompt, note } = request ? await promptFor(tokenizer, new ChatTemplatePool(), req, request.raw) : {};
  if (note) io.err(`tokenscope tokens: no prompt ids: ${note}`);
  const { table, analysis } = exchangeTokenTable({
    tokenizer,
    response: input.response,
    request,
    model,
    family,
    promptTokens: prompt?.ids.length,
    promptIds: prompt?.ids,
  });
  // Written a piece at a time as it is made: the output of a large stream is never one string.
  const emit = (lines: string) => io.out(lines);
  if (args.bool('json')) {
    const p = table.accounting.prompt;
    const promptJson =
      p && prompt ? { ids: prompt.ids, counted: p.counted, billed: p.billed ?? null, delta: p.delta ?? null, mismatch: p.mismatch } : null;
    writeJson(table, analysis.family, emittedTableIds(tokenizer, table), promptJson, emit);
  } else writeText(input.label, table, paletteOf(io), emit);
  return 0;
};
export default tokens;

/** One stderr line per file at every 25% (downloads are 3–30 MB), so a slow link shows it is alive. */
function progressReporter(io: CliIO): (p: DownloadProgress) => void {
  const shown = new Map<string, number>();
  return (p) => {
    const key = `${p.repo}/${p.file}`;
    const step = p.total ? Math.floor((p.received / p.total) * 4) : 0;
    if (shown.get(key) === step) return;
    shown.set(key, step);
    const mb = (n: number) => (n / 1024 ** 2).toFixed(1);
    io.err(`downloading ${key}: ${mb(p.received)}${p.total ? ` of ${mb(p.total)}` : ''} MB`);
  };
}

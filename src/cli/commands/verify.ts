import { UserError } from '../../core/model';
import { verifyJson, verifyText } from '../../core/upstream/describe';
import { OpenRouterClient } from '../../core/upstream/openrouter';
import {
  DEFAULT_VERIFY_CONCURRENCY,
  parseThreshold,
  readK2vvJsonl,
  thresholdFailure,
  verifyProvider,
  type VerifyThresholds,
} from '../../core/upstream/verify';
import { parseArgs } from '../args';
import { interruptSignal, readTextFile, type Command } from '../io';
import { progressOf } from '../progress';
import { safeLine } from '../terminal';

/** Bad lines printed one by one; the rest are counted. */
const SHOWN_BAD_LINES = 5;
/** Requests in flight at most (OpenRouter rate-limits far below this). */
const MAX_CONCURRENCY = 64;

const HELP = `usage: tokenscope verify SAMPLES.jsonl --provider SLUG [--reference SLUG] [--model ID] [--concurrency N]
                        [--min-f1 X] [--min-schema Y] [--openrouter-url URL] [--json]

K2-Vendor-Verifier-style batch: each line of SAMPLES.jsonl is a Chat Completions request, sent to one OpenRouter
provider (pinned, no fallbacks; --concurrency at once, default ${DEFAULT_VERIFY_CONCURRENCY}). Prints K2VV's summary, schema accuracy,
trigger similarity against --reference (when given), and Tokenscope's findings per rule.
Pass marks, for CI: --min-schema Y (schema accuracy) and --min-f1 X (trigger F1, needs --reference), each a share
(0.95) or a percentage (95%). Below one, or when it cannot be computed (no tool_calls finish: every call failed),
verify exits 1 and says why in one line per provider on stderr (--json adds "belowThresholds").
The OpenRouter key comes from OPENROUTER_API_KEY. On a terminal, stderr shows progress (done, rate, ETA); piped, nothing.`;

const cmd: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: ['provider', 'reference', 'model', 'concurrency', 'openrouter-url', 'min-f1', 'min-schema'],
    booleans: ['json'],
  });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const [file] = args.positional;
  if (!file) throw new UserError('which samples? `tokenscope verify SAMPLES.jsonl --provider SLUG`');
  const provider = args.str('provider');
  if (!provider) throw new UserError('which provider? pass --provider SLUG');
  const concurrency = args.positiveInt('concurrency', DEFAULT_VERIFY_CONCURRENCY, MAX_CONCURRENCY);
  const thresholds: VerifyThresholds = {
    ...(args.str('min-f1') !== undefined && { minF1: parseThreshold(args.str('min-f1')!, '--min-f1') }),
    ...(args.str('min-schema') !== undefined && { minSchema: parseThreshold(args.str('min-schema')!, '--min-schema') }),
  };
  if (thresholds.minF1 !== undefined && !args.str('reference'))
    throw new UserError('--min-f1 needs --reference SLUG: trigger F1 compares finish reasons with a reference provider');
  const text = readTextFile(file);
  const { requests, skipped } = readK2vvJsonl(text);
  for (const s of skipped.slice(0, SHOWN_BAD_LINES)) io.err(`tokenscope verify: ${file}:${s.line} skipped: ${safeLine(s.reason, 200)}`);
  if (skipped.length > SHOWN_BAD_LINES)
    io.err(`tokenscope verify: … and ${skipped.length - SHOWN_BAD_LINES} more lines skipped (${skipped.length} in all)`);
  if (requests.length === 0) throw new UserError(`${file} holds no request${skipped.length ? ` (${skipped.length} unusable lines)` : ''}`);
  const interrupt = interruptSignal();
  // On a terminal only: a line with the rate and ETA on stderr (a --json report on stdout is not touched).
  const progress = progressOf(io, 'verify');
  try {
    const report = await verifyProvider({
      requests,
      client: new OpenRouterClient({ baseUrl: args.str('openrouter-url') }),
      provider,
      reference: args.str('reference'),
      model: args.str('model'),
      concurrency,
      signal: interrupt.signal,
      onProgress: (p) => progress.update(p.done, p.total, p.failed),
    });
    progress.clear();
    const below = [thresholdFailure(report, thresholds)].filter((l): l is string => !!l);
    io.out(
      args.bool('json')
        ? JSON.stringify(
            { ...verifyJson(report), skippedLines: skipped, ...(Object.keys(thresholds).length && { thresholds, belowThresholds: below }) },
            null,
            2,
          )
        : verifyText(report),
    );
    if (report.cancelled) return 130;
    for (const l of below) io.err(`tokenscope verify: ${safeLine(l)}`);
    return below.length ? 1 : 0;
  } finally {
    progress.clear();
    interrupt.release();
  }
};
export default cmd;

import { UserError } from '../../core/model';
import { verifyJson, verifyText } from '../../core/upstream/describe';
import { OpenRouterClient } from '../../core/upstream/openrouter';
import { DEFAULT_VERIFY_CONCURRENCY, readK2vvJsonl, verifyProvider } from '../../core/upstream/verify';
import { parseArgs } from '../args';
import { interruptSignal, readTextFile, type Command } from '../io';
import { progressOf } from '../progress';
import { safeLine } from '../terminal';

/** Bad lines printed one by one; the rest are counted. */
const SHOWN_BAD_LINES = 5;
/** Requests in flight at most (OpenRouter rate-limits far below this). */
const MAX_CONCURRENCY = 64;

const HELP = `usage: tokenscope verify SAMPLES.jsonl --provider SLUG [--reference SLUG] [--model ID] [--concurrency N]
                        [--openrouter-url URL] [--json]

K2-Vendor-Verifier-style batch: each line of SAMPLES.jsonl is a Chat Completions request, sent to one OpenRouter
provider (pinned, no fallbacks; --concurrency at once, default ${DEFAULT_VERIFY_CONCURRENCY}). Prints K2VV's summary, schema accuracy,
trigger similarity against --reference (when given), and Tokenscope's findings per rule.
The OpenRouter key comes from OPENROUTER_API_KEY. On a terminal, stderr shows progress (done, rate, ETA); piped, nothing.`;

const cmd: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['provider', 'reference', 'model', 'concurrency', 'openrouter-url'], booleans: ['json'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const [file] = args.positional;
  if (!file) throw new UserError('which samples? `tokenscope verify SAMPLES.jsonl --provider SLUG`');
  const provider = args.str('provider');
  if (!provider) throw new UserError('which provider? pass --provider SLUG');
  const concurrency = args.positiveInt('concurrency', DEFAULT_VERIFY_CONCURRENCY, MAX_CONCURRENCY);
  const text = readTextFile(file);
  const { requests, skipped } = readK2vvJsonl(text);
  for (const s of skipped.slice(0, SHOWN_BAD_LINES)) io.err(`tokenscope verify: ${file}:${s.line} skipped: ${safeLine(s.reason, 200)}`);
  if (skipped.length > SHOWN_BAD_LINES) io.err(`tokenscope verify: … and ${skipped.length - SHOWN_BAD_LINES} more lines skipped (${skipped.length} in all)`);
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
    io.out(args.bool('json') ? JSON.stringify({ ...verifyJson(report), skippedLines: skipped }, null, 2) : verifyText(report));
    return report.cancelled ? 130 : 0;
  } finally {
    progress.clear();
    interrupt.release();
  }
};
export default cmd;

import { existsSync } from 'node:fs';
import type { CaptureStore } from '../../core/capture/store';
import { defaultDataDir } from '../../core/capture/store';
import { UserError } from '../../core/model';
import { plural } from '../../core/tokens/accounting';
import { requestPromptTokens } from '../../core/tokens/prompt';
import { compareProviders, DEFAULT_CONCURRENCY, DEFAULT_SAMPLES } from '../../core/upstream/compare';
import { compareJson, compareText } from '../../core/upstream/describe';
import { entriesFromEndpoints, OpenRouterClient } from '../../core/upstream/openrouter';
import { capturedChatRequest } from '../../core/upstream/rerun';
import { parseArgs } from '../args';
import { interruptSignal, readTextFile, type CliIO, type Command } from '../io';
import { progressOf } from '../progress';
import { safeLine } from '../terminal';
import { keepSlugs, openStoreForWriting, openStoreWithCaptures } from '../store';

/** Samples per provider at most: each one is a paid request. */
const MAX_SAMPLES = 1000;
/** Requests in flight at most. */
const MAX_CONCURRENCY = 64;

const HELP = `usage: tokenscope compare (ID | --request REQUEST.json) [--model ID] [--providers a,b,…] [--reference SLUG]
                         [--samples N] [--concurrency N] [--openrouter-url URL] [--data-dir DIR] [--tokenizer-dir DIR] [--json]
       tokenscope compare --list --model ID [--openrouter-url URL] [--data-dir DIR] [--json]

Sends one Chat Completions request to every OpenRouter provider of its model (each pinned, no fallbacks), N times
each (default ${DEFAULT_SAMPLES}), at most --concurrency at once (default ${DEFAULT_CONCURRENCY}), and compares: who really served it,
finish reasons, the K2 Vendor Verifier's trigger F1 (against --reference, default the first provider) and schema
accuracy, Tokenscope's findings per rule, time to first token, tokens/s and cost. Failed requests are listed.
With a capture ID the samples are recorded as captures linked to it (also with --data-dir).
--list prints the providers serving a model now (their slugs are what --providers, rerun --target and a policy
take) and keeps their slugs in the data dir, so \`policy set\` and \`providers\` check slugs against them.
With the model's tokenizer at hand (--tokenizer-dir, or one \`tokenscope tokens\` downloaded before), each sample's
usage.prompt_tokens is checked against the prompt the model's own chat template renders (prompt-token-mismatch).
The OpenRouter key comes from OPENROUTER_API_KEY. Ctrl-C stops the comparison and aborts requests in flight.
On a terminal, stderr shows progress (done, rate, ETA) and each sample as it finishes; piped, nothing.`;

async function listProviders(
  client: OpenRouterClient,
  model: string,
  json: boolean,
  io: CliIO,
  dataDir: string | undefined,
): Promise<number> {
  const endpoints = await client.endpoints(model);
  if (dataDir) await keepSlugs(dataDir, entriesFromEndpoints(endpoints), io);
  if (json) {
    io.out(JSON.stringify(endpoints, null, 2));
    return 0;
  }
  const perM = (x: number | undefined) => (x === undefined ? '-' : `$${(x * 1e6).toFixed(2)}`);
  io.out(`${safeLine(model)}: ${plural(endpoints.length, 'provider')} (price per million tokens, prompt / completion)`);
  for (const e of endpoints) {
    const state = e.status === undefined || e.status >= 0 ? 'up' : `degraded or down (status ${e.status})`;
    const uptime = e.uptimeLast30m === undefined ? '' : `, uptime ${e.uptimeLast30m.toFixed(1)}%`;
    io.out(
      `  ${safeLine(e.slug).padEnd(16)} ${safeLine(e.name).padEnd(16)} ${safeLine(e.quantization ?? '-').padEnd(8)} ${perM(e.pricing?.prompt)} / ${perM(e.pricing?.completion)}  ${state}${uptime}`,
    );
  }
  return 0;
}

function readRequest(file: string): Record<string, unknown> {
  const text = readTextFile(file);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${file} is not JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (typeof v !== 'object' || v === null || !Array.isArray((v as { messages?: unknown }).messages)) {
    throw new UserError(`${file} is not a Chat Completions request (no messages array)`);
  }
  return v as Record<string, unknown>;
}

const cmd: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: ['request', 'model', 'providers', 'reference', 'samples', 'concurrency', 'openrouter-url', 'data-dir', 'tokenizer-dir'],
    booleans: ['json', 'list'],
  });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  // Bounds first: a typo never gets as far as the network.
  const samples = args.positiveInt('samples', DEFAULT_SAMPLES, MAX_SAMPLES);
  const concurrency = args.positiveInt('concurrency', DEFAULT_CONCURRENCY, MAX_CONCURRENCY);
  const client = new OpenRouterClient({ baseUrl: args.str('openrouter-url') });
  if (args.bool('list')) {
    const model = args.str('model');
    if (!model) throw new UserError('which model? `tokenscope compare --list --model author/slug`');
    // Kept in the data dir when one is given or already exists: a listing alone never creates one.
    const keepIn = args.str('data-dir') ?? (existsSync(defaultDataDir()) ? defaultDataDir() : undefined);
    return listProviders(client, model, args.bool('json'), io, keepIn);
  }
  const [id] = args.positional;
  const file = args.str('request');
  if (!id === !file) throw new UserError('give either a capture ID or --request REQUEST.json');
  const dataDir = args.str('data-dir') ?? (id ? defaultDataDir() : undefined);
  let store: CaptureStore | undefined;
  const interrupt = interruptSignal();
  // On a terminal only: a line with the rate and ETA on stderr, each sample's outcome above it (without --json).
  const progress = progressOf(io, 'compare');
  try {
    if (dataDir)
      store = id
        ? await openStoreWithCaptures(dataDir, io, `with id "${id}"`, { analyze: true, readOnly: false })
        : await openStoreForWriting(dataDir, io);
    const captured = id ? capturedChatRequest(store!, id) : undefined;
    const request = captured?.body ?? readRequest(file!);
    const report = await compareProviders({
      request,
      promptTokens: await localPromptTokens(request, args.str('model'), args.str('tokenizer-dir'), dataDir, io),
      client,
      model: args.str('model'),
      providers: args
        .str('providers')
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      reference: args.str('reference'),
      samples,
      concurrency,
      store,
      parentId: captured?.id,
      signal: interrupt.signal,
      onProgress: (p) => progress.update(p.done, p.total, p.failed),
      onSample: args.bool('json')
        ? undefined
        : (s) =>
            progress.note(
              `  ${s.provider} #${s.sample + 1}: ${s.outcome.ok ? (s.outcome.response?.finishReason ?? 'ok') : s.outcome.error}`,
            ),
    });
    progress.clear();
    io.out(args.bool('json') ? JSON.stringify(compareJson(report), null, 2) : compareText(report));
    return report.cancelled ? 130 : 0;
  } finally {
    progress.clear();
    interrupt.release();
    await store?.close();
  }
};
export default cmd;

/**
 * The request's prompt length in the model's own template, when the tokenizer is at hand. Never downloads (a
 * comparison is about providers); a named --tokenizer-dir that cannot render it is said once on stderr.
 */
async function localPromptTokens(
  request: Record<string, unknown>,
  model: string | undefined,
  tokenizerDir: string | undefined,
  dataDir: string | undefined,
  io: CliIO,
): Promise<number | undefined> {
  try {
    const id = model ?? (typeof request.model === 'string' ? request.model : undefined);
    const prompt = await requestPromptTokens(
      { model: id, tokenizerDir, cacheDir: dataDir ?? defaultDataDir(), offline: true },
      { ...request, ...(id ? { model: id } : {}) },
    );
    return prompt.ids.length;
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    if (tokenizerDir) io.err(`tokenscope compare: prompt tokens not checked: ${e.message}`);
    return undefined;
  }
}

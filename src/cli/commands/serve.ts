import { defaultDataDir, openStore } from '../../core/capture/store';
import { exchangeLine, findingLine, localTime } from '../../core/capture/describe';
import { UserError } from '../../core/model';
import { DEFAULT_PORT, startProxy } from '../../core/proxy/server';
import { checkUpstreamUrl, effectiveUpstreams, routePrefix, type Upstreams } from '../../core/proxy/routes';
import { parseArgs } from '../args';
import type { Command } from '../io';

const HELP = `usage: tokenscope serve [--port N] [--data-dir DIR] [--upstream URL] [--openrouter-url URL] [--sglang-url URL]
                        [--anthropic-url URL] [--openai-url URL] [--custom NAME=URL[,NAME=URL…]]

Runs the capture proxy on 127.0.0.1 and prints one line per finished exchange, plus each error finding.
Point an agent's base URL at a route (\`tokenscope agents\` prints the exact setup per agent):
  /openrouter/v1   OpenRouter            /anthropic   Anthropic (Claude Code appends /v1/messages)
  /sglang/v1       your SGLang server    /openai/v1   OpenAI
  /u/NAME/v1       a --custom upstream   /v1          the --upstream (default OpenRouter)
Captures go to --data-dir (default ${defaultDataDir()}, or TOKENSCOPE_DATA_DIR).`;

function upstreamsFrom(args: ReturnType<typeof parseArgs>): Upstreams {
  const url = (flag: string) => {
    const v = args.str(flag);
    if (v === undefined) return undefined;
    try {
      return checkUpstreamUrl(v, `--${flag}`);
    } catch (e) {
      throw new UserError((e as Error).message);
    }
  };
  const custom: Record<string, string> = {};
  for (const pair of (args.str('custom') ?? '').split(',').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UserError(`--custom expects NAME=URL, got "${pair}"`);
    try {
      custom[pair.slice(0, eq)] = checkUpstreamUrl(pair.slice(eq + 1), `--custom ${pair.slice(0, eq)}`);
    } catch (e) {
      throw new UserError((e as Error).message);
    }
  }
  return {
    default: url('upstream'),
    openrouter: url('openrouter-url'),
    sglang: url('sglang-url'),
    anthropic: url('anthropic-url'),
    openai: url('openai-url'),
    custom,
  };
}

const serve: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['port', 'data-dir', 'upstream', 'openrouter-url', 'sglang-url', 'anthropic-url', 'openai-url', 'custom'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const port = args.num('port', DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port must be 0–65535, got ${port}`);
  const upstreams = upstreamsFrom(args);
  const dataDir = args.str('data-dir') ?? defaultDataDir();

  // Listen for Ctrl+C / SIGTERM before anything starts, so a stop request is never the default (abrupt) exit.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const time = (ms: number) => localTime(ms).slice(11);
  const store = await openStore(dataDir, {
    onWarning: (m) => io.err(`tokenscope: ${m}`),
    onAnalyzed: (x, result) => {
      io.out(`${time(x.startedAt)}  ${exchangeLine(x)}`);
      for (const f of result?.analysis.findings ?? []) if (f.severity === 'error') io.out(`    ${findingLine(f)}`);
    },
  }).catch((e: NodeJS.ErrnoException) => {
    throw new UserError(`cannot open the capture store in ${dataDir}: ${e.message}`);
  });
  const proxy = await startProxy({ port, store, upstreams, log: (l) => io.err(l) }).catch(async (e) => {
    await store.close();
    throw e;
  });
  // Exchanges the analysis does not see (no response at all) are printed as soon as they end.
  proxy.on('exchange', (x) => {
    if (x.status === undefined) io.out(`${time(x.startedAt)}  ${exchangeLine(x)}${x.error ? `  ${x.error}` : ''}`);
  });
  io.out(`tokenscope: capturing to ${dataDir}`);
  const all = effectiveUpstreams(upstreams);
  for (const r of ['openrouter', 'sglang', 'anthropic', 'openai'] as const) io.out(`  ${proxy.url}${routePrefix(r)}  → ${all[r]}`);
  for (const [name, url] of Object.entries(all.custom)) io.out(`  ${proxy.url}${routePrefix(name)}  → ${url}`);
  io.out(`  ${proxy.url}/v1  → ${all.default}/v1`);
  io.out('Press Ctrl+C to stop.');

  await stopped;
  await proxy.close();
  await store.close();
  return 0;
};
export default serve;

import { defaultDataDir } from '../../core/capture/store';
import { exchangeLine, localTime } from '../../core/capture/describe';
import { UserError } from '../../core/model';
import { DEFAULT_PORT, DEFAULT_TIMEOUTS, startProxy, type ProxyTimeouts } from '../../core/proxy/server';
import {
  DEFAULT_UPSTREAMS,
  checkRouteName,
  checkUpstreamUrl,
  effectiveUpstreams,
  routePrefix,
  shownUrl,
  type NamedRoute,
  type Upstreams,
} from '../../core/proxy/routes';
import { DEFAULT_UPSTREAM_CONNECTIONS, MAX_UPSTREAM_CONNECTIONS } from '../../core/proxy/slots';
import { redactUrlsIn } from '../../core/redact';

const NAMED_ROUTES = Object.keys(DEFAULT_UPSTREAMS) as NamedRoute[];
import { otlpRequestedByEnv } from '../../core/export/otlp-config';
import { inFlight, inFlightLine, QuietStreams, type InFlight } from '../../core/live/inflight';
import { repairStage } from '../../core/repair/stage';
import { repairSummary } from '../../core/repair/describe';
import { parseArgs } from '../args';
import { policyStage } from '../../core/policy/policy';
import { policyLines } from '../../core/policy/describe';
import { LivePolicies, policyFilePath } from '../../core/policy/stored';
import { ProviderDirectory } from '../../core/policy/slugs';
import { repairFromFlags } from './serve-options';
import { paletteOf, type Command } from '../io';
import { findingLine, safeLine } from '../terminal';
import { OTLP_BOOLEANS, OTLP_HELP, OTLP_VALUES, otlpFromArgs, otlpReport, otlpTarget } from '../otlp';
import { openStoreForServing } from '../store';

const QUIET_AFTER_MS = 10_000;
const QUIET_POLL_MS = 5_000;

/** The in-flight line with the model id and agent (network text) made safe for a terminal. */
function inFlightSafe(f: InFlight): string {
  return inFlightLine(f).replace(
    /[\u0000-\u001f\u007f-\u009f\ufdd0-\ufdef]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

const HELP = `usage: tokenscope serve [--port N] [--data-dir DIR] [--upstream URL] [--openrouter-url URL] [--sglang-url URL]
                        [--anthropic-url URL] [--openai-url URL] [--custom NAME=URL[,NAME=URL…]] [--max-body-mb N]
                        [--upstream-timeout S] [--idle-timeout S] [--header-timeout S] [--upstream-connections N]
                        [--otlp | --no-otlp] [--otlp-endpoint URL] [--otlp-protocol P] [--otlp-content]
                        [--repair [--repair-truncated withhold|passthrough] [--repair-routes R,…] [--repair-models M,…]]
                        [--policy FILE]

Runs the capture proxy on 127.0.0.1 and prints one line per finished exchange, plus each error finding, and an
"in flight" line for a stream silent for 10 s (again every further 10 s).
Point an agent's base URL at a route (\`tokenscope agents\` prints the exact setup per agent):
  /openrouter/v1   OpenRouter            /anthropic   Anthropic (Claude Code appends /v1/messages)
  /sglang/v1       your SGLang server    /openai/v1   OpenAI
  /u/NAME/v1       a --custom upstream   /v1          the --upstream (default OpenRouter)
A --custom NAME that is a built-in route (openrouter, sglang, anthropic, openai) replaces that route.
--repair delivers tool calls a provider leaked as markup into content or reasoning as structured calls (OpenAI Chat
Completions and Responses, also over a WebSocket, Anthropic Messages; the capture keeps the upstream's bytes and the
delivered ones). A truncated call is never delivered as a call: it is withheld with finish_reason length/error
(withhold, the default) or left as text (passthrough).
Provider policies (per-model OpenRouter provider preferences, added to and merged with the agent's own \`provider\`
object on OpenRouter routes) are the ones stored in the data dir (\`tokenscope policy set\`, the VS Code Providers
view), plus --policy FILE: a JSON object of model id → {ignore, order, only, allow_fallbacks}. For a model both name,
the stored policy wins. Both are followed live: a change applies from the next request (within a second), without a
restart, and streams in flight are not touched.
Captures go to --data-dir (default ${defaultDataDir()}, or TOKENSCOPE_DATA_DIR).
Timeouts, in seconds: --upstream-timeout for the upstream's response headers (default ${DEFAULT_TIMEOUTS.upstreamHeadersMs / 1000}),
--idle-timeout for a silence mid-response (default ${DEFAULT_TIMEOUTS.idleMs / 1000}; SSE clients then get an error event),
--header-timeout for a client's request headers (default ${DEFAULT_TIMEOUTS.clientHeadersMs / 1000}).
--upstream-connections: the most exchanges in flight to one upstream at once (default ${DEFAULT_UPSTREAM_CONNECTIONS});
each has a connection of its own. More wait for one to end: the wait counts in --upstream-timeout, and the capture
records it (\`show\` prints "waited N ms for a free connection to the upstream").

--otlp sends each finished exchange to an OpenTelemetry collector as a GenAI span; it is on by itself when
OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (--no-otlp, or OTEL_SDK_DISABLED=true,
turns it off). ${OTLP_HELP}
--max-body-mb: the most decoded bytes kept per response body, and per request body (default 64; the agent and the
upstream still get every byte, and the capture says what it did not keep).
--openrouter-url is OpenRouter's API (default https://openrouter.ai/api; the …/api/v1 form other commands take works too).
Upstream URLs may carry a credential (?key=…, user:pass@): it is used, and never printed or recorded.`;

/** `base` + `suffix` (before the base's query, where a path goes), shown with its credentials redacted. */
function shownBaseWith(base: string, suffix: string): string {
  const q = base.search(/[?#]/);
  return shownUrl(q < 0 ? base + suffix : base.slice(0, q) + suffix + base.slice(q));
}

/** A timeout flag in seconds (fractions allowed), as ms. */
function timeoutMs(args: ReturnType<typeof parseArgs>, flag: string): number | undefined {
  if (args.str(flag) === undefined) return undefined;
  const s = args.num(flag, 0);
  if (!(s > 0 && s <= 24 * 3600))
    throw new UserError(`--${flag} must be a number of seconds above 0 and at most 86400, got ${args.str(flag)}`);
  return Math.round(s * 1000);
}

/**
 * The OpenRouter route's base: `/openrouter/v1/…` goes to BASE/v1/…, so BASE is `…/api`. The API root the other
 * commands take (`…/api/v1`) is taken too, rather than sending every request to `…/api/v1/v1/…`.
 */
function openRouterBase(checked: string | undefined): string | undefined {
  if (checked === undefined) return undefined;
  const u = new URL(checked);
  if (!/\/api\/v1\/?$/.test(u.pathname)) return checked;
  u.pathname = u.pathname.replace(/\/v1\/?$/, '');
  return u.toString();
}

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
  const named: Partial<Record<NamedRoute, string>> = {};
  const custom: Record<string, string> = Object.create(null);
  for (const pair of args
    .list('custom')
    .flatMap((v) => v.split(','))
    .filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UserError(`--custom expects NAME=URL, got "${redactUrlsIn(pair)}"`);
    try {
      const name = checkRouteName(pair.slice(0, eq), '--custom');
      const checked = checkUpstreamUrl(pair.slice(eq + 1), `--custom ${name}`);
      // A built-in route's name replaces that route: `/openrouter` goes where it says.
      if ((NAMED_ROUTES as readonly string[]).includes(name)) named[name as NamedRoute] = checked;
      else custom[name] = checked;
    } catch (e) {
      throw new UserError((e as Error).message);
    }
  }
  return {
    default: url('upstream'),
    openrouter: named.openrouter ?? openRouterBase(url('openrouter-url')),
    sglang: named.sglang ?? url('sglang-url'),
    anthropic: named.anthropic ?? url('anthropic-url'),
    openai: named.openai ?? url('openai-url'),
    custom,
  };
}

const serve: Command = async (argv, io) => {
  const args = parseArgs(argv, {
    values: [
      'port',
      'data-dir',
      'upstream',
      'openrouter-url',
      'sglang-url',
      'anthropic-url',
      'openai-url',
      'upstream-timeout',
      'idle-timeout',
      'header-timeout',
      'upstream-connections',
      'repair-truncated',
      'repair-routes',
      'repair-models',
      'policy',
      ...OTLP_VALUES,
      'max-body-mb',
    ],
    booleans: ['repair', 'otlp', 'no-otlp', ...OTLP_BOOLEANS],
    repeatable: ['custom'],
  });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const port = args.num('port', DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port must be 0–65535, got ${port}`);
  const upstreams = upstreamsFrom(args);
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const repair = repairFromFlags(args);
  const policyFile = args.str('policy');
  // Read now (a bad --policy FILE stops here), then looked at again at most every 250 ms, on a request.
  let policyChanged = false;
  const policies = new LivePolicies({
    dataDir,
    file: policyFile,
    onWarning: (m) => io.err(`tokenscope: ${safeLine(m)}`),
    // Noticed on a request: printed after it, off the forwarding path.
    onChange: () =>
      void (
        policyChanged ||
        ((policyChanged = true),
        setImmediate(() => ((policyChanged = false), printPolicies(`${time(Date.now())}  provider policy changed`))))
      ),
  });
  const timeouts: ProxyTimeouts = {
    upstreamHeadersMs: timeoutMs(args, 'upstream-timeout'),
    idleMs: timeoutMs(args, 'idle-timeout'),
    clientHeadersMs: timeoutMs(args, 'header-timeout'),
  };
  const wantOtlp = !args.bool('no-otlp') && (args.bool('otlp') || args.str('otlp-endpoint') !== undefined || otlpRequestedByEnv());
  const otlp = wantOtlp ? otlpFromArgs(args, io) : undefined;
  const maxBodyMb = args.num('max-body-mb', 64);
  // Each kept body is read whole when it is analysed: past a gigabyte that is an out-of-memory crash, not a capture.
  if (!(maxBodyMb > 0 && maxBodyMb <= 1024))
    throw new UserError(`--max-body-mb must be a number above 0 and at most 1024, got ${args.str('max-body-mb')}`);
  const maxBodyBytes = Math.round(maxBodyMb * 1024 * 1024);
  const upstreamConnections = args.num('upstream-connections', DEFAULT_UPSTREAM_CONNECTIONS);
  if (!(Number.isInteger(upstreamConnections) && upstreamConnections >= 1 && upstreamConnections <= MAX_UPSTREAM_CONNECTIONS)) {
    throw new UserError(
      `--upstream-connections must be a whole number from 1 to ${MAX_UPSTREAM_CONNECTIONS}, got ${args.str('upstream-connections')}`,
    );
  }

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
  const pal = paletteOf(io);
  let slugsOf: () => ProviderDirectory = () => new ProviderDirectory();
  const printPolicies = (head: string) => {
    const all = policies.get();
    const n = Object.keys(all).length;
    const from = `${policyFilePath(dataDir)}${policyFile === undefined ? '' : ` and ${policyFile}`}`;
    io.out(`${head}: ${n ? `${n} model${n === 1 ? '' : 's'}` : 'none'} (from ${from}; followed live)`);
    const lines = policyLines(all, slugsOf());
    const source = policies.sources();
    Object.keys(all).forEach((k, i) =>
      io.out(`    ${safeLine(lines[i])}${policyFile !== undefined ? ` [${source[k] === 'file' ? policyFile : 'stored'}]` : ''}`),
    );
  };
  const store = await openStoreForServing(dataDir, io, {
    maxBodyBytes,
    onAnalyzed: (x, result) => {
      io.out(`${time(x.startedAt)}  ${safeLine(exchangeLine(x))}`);
      for (const f of result?.findings ?? []) if (f.severity === 'error') io.out(`    ${findingLine(f, pal)}`);
      if (x.repair) io.out(`    repaired: ${safeLine(repairSummary(x.repair))}`);
    },
  });
  slugsOf = () => new ProviderDirectory(store.providerSlugs());
  // Export only listens to the store: spans are built after an exchange has finished, never on the forwarding path.
  const detachOtlp = otlp?.attach(store);
  const proxy = await startProxy({
    port,
    store,
    upstreams,
    timeouts,
    upstreamConnections,
    maxRequestBodyBytes: maxBodyBytes,
    maxDecodedBytes: maxBodyBytes,
    log: (l) => io.err(safeLine(l)),
    ...(repair.enabled && { responseStage: repairStage(() => repair) }),
    requestStage: policyStage(() => policies.get()),
  }).catch(async (e) => {
    detachOtlp?.();
    await otlp?.shutdown();
    await store.close();
    throw e;
  });
  // Exchanges the analysis does not see (no response at all) are printed as soon as they end.
  proxy.on('exchange', (x) => {
    if (x.status === undefined) io.out(`${time(x.startedAt)}  ${safeLine(exchangeLine(x))}${x.error ? `  ${safeLine(x.error)}` : ''}`);
  });
  if (store.off !== undefined) io.err(`tokenscope: capture is off: ${safeLine(store.off)}; the proxy forwards without recording`);
  else io.out(`tokenscope: capturing to ${dataDir}`);
  const all = effectiveUpstreams(upstreams);
  // Upstream URLs are shown with their credentials redacted (`?key=[REDACTED:url-credential]`).
  for (const r of ['openrouter', 'sglang', 'anthropic', 'openai'] as const)
    io.out(`  ${proxy.url}${routePrefix(r)}  → ${safeLine(shownUrl(all[r]))}`);
  for (const [name, url] of Object.entries(all.custom)) io.out(`  ${proxy.url}${routePrefix(name)}  → ${safeLine(shownUrl(url))}`);
  io.out(`  ${proxy.url}/v1  → ${safeLine(shownBaseWith(all.default, '/v1'))}`);
  if (otlp) io.out(`  OpenTelemetry spans → ${otlpTarget(otlp)}`);
  if (Object.keys(policies.get()).length > 0) printPolicies('  provider policy');
  if (repair.enabled) {
    const where = [
      repair.routes?.length ? `routes ${repair.routes.join(', ')}` : 'every route',
      repair.models?.length ? `models ${repair.models.join(', ')}` : 'every model',
    ];
    io.out(`  repair: on (${where.join(', ')}; truncated calls: ${repair.truncated})`);
  }
  io.out('Press Ctrl+C to stop.');
  // A stream that goes quiet gets an "in flight" line (every 10 s of silence). Only streams older than that are read.
  const quiet = new QuietStreams(QUIET_AFTER_MS);
  const quietTimer = setInterval(() => {
    for (const f of quiet.due(inFlight(store, Date.now(), QUIET_AFTER_MS))) io.out(`${time(Date.now())}  ${inFlightSafe(f)}`);
  }, QUIET_POLL_MS);
  quietTimer.unref();

  await stopped;
  clearInterval(quietTimer);
  await proxy.close();
  await store.idle();
  if (otlp) {
    detachOtlp?.();
    await otlp.shutdown();
    io.out(`tokenscope: OpenTelemetry: ${otlpReport(otlp.stats())}`);
  }
  await store.close();
  return 0;
};
export default serve;

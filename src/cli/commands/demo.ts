import { basename, join, relative } from 'node:path';
import { defaultDataDir, openStore, type CaptureStore } from '../../core/capture/store';
import { exchangeLine } from '../../core/capture/describe';
import { resultFor } from '../../core/capture/analysis';
import { DEMO_AGENTS, demoSpeaks, findAgent, runAgent, type DemoAgent } from '../../core/demo/agent';
import {
  BROKEN_CASE,
  DEMO_PROVIDER,
  clearDemoCaptures,
  isDemoCapture,
  replayDemo,
  startDemoProxy,
  type DemoProxy,
  type DemoResult,
} from '../../core/demo/index';
import { UserError } from '../../core/model';
import { DEFAULT_PORT } from '../../core/proxy/server';
import { repairSummary } from '../../core/repair/describe';
import { repairStage } from '../../core/repair/stage';
import { parseArgs } from '../args';
import { repairFromFlags } from './serve-options';
import { paletteOf, type CliIO, type Command } from '../io';
import { findingLine, safeLine } from '../terminal';

const HELP = `usage: tokenscope demo [--port N] [--data-dir DIR] [--agent opencode|claude-code|codex|none] [--repair]
       tokenscope demo --clear [--data-dir DIR]

A first look at Tokenscope, with no key and nothing leaving this machine: starts the capture proxy in front of a
built-in local upstream ("${DEMO_PROVIDER}", route demo) and replays real failure classes through it — a Kimi K2
tool-call section without its end, markup leaked into reasoning, truncated arguments — and a healthy call. It
prints each capture with its findings and the commands to dig in, then keeps serving until Ctrl+C.

  --port N       proxy port (default ${DEFAULT_PORT}; a free one when that is taken and --port is not given)
  --agent NAME   also run that coding agent, headless, against the demo upstream through the proxy
  --repair       repair mode, as \`serve --repair\`: leaked calls reach the agent as tool calls, and the tool runs
  --clear        delete the demo captures from the capture store and exit
Captures go to --data-dir (default ${defaultDataDir()}, or TOKENSCOPE_DATA_DIR); they are marked as demo captures.`;

/** How the user invoked Tokenscope, for the commands printed to copy: `tokenscope` once linked, else `node bin/…`. */
function invocation(): string {
  const script = process.argv[1];
  if (!script || basename(script) !== 'tokenscope.js') return 'tokenscope';
  const rel = relative(process.cwd(), script);
  return `node ${rel && !rel.startsWith('..') ? rel : script}`;
}

/**
 * A line of agent output: the agent's own styling (CSI sequences: colour, cursor) dropped, then made terminal-safe
 * like all network text, so a model's output cannot drive the terminal through the agent.
 */
export function agentLine(text: string): string {
  return safeLine(text.replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, ''));
}

function rulesText(r: DemoResult): string {
  const s = r.exchange.summary;
  if (!s) return 'not analysed';
  if (s.rules.length === 0) return 'no findings';
  return [...new Set(s.rules)].join(', ');
}

function printResults(io: CliIO, store: CaptureStore, results: DemoResult[]): void {
  for (const r of results) {
    io.out(`  ${r.case.title}`);
    io.out(`    ${safeLine(exchangeLine(r.exchange))}`);
    io.out(`    rules: ${rulesText(r)}`);
    if (r.exchange.repair) io.out(`    repaired: ${safeLine(repairSummary(r.exchange.repair))}`);
  }
  const broken = results.find((r) => (r.exchange.summary?.counts.error ?? 0) > 0);
  if (!broken) return;
  // The first broken exchange, finding by finding: what `show` prints in full.
  const body = store.readResponse(broken.exchange.id);
  if (!body) return;
  const findings = resultFor(store, broken.exchange, body.bytes, body.chunks).analysis.findings.filter((f) => f.severity === 'error');
  io.out('');
  io.out(`What Tokenscope found in ${broken.exchange.id}, the first one:`);
  const pal = paletteOf(io);
  for (const f of findings) io.out(`  ${findingLine(f, pal)}`);
}

function printNextSteps(io: CliIO, results: DemoResult[], dataDirFlag: string, demo: DemoProxy): void {
  const cli = invocation();
  const id = (c: string) => results.find((r) => r.case.id === c)?.exchange.id;
  const broken = id(BROKEN_CASE);
  const steps: [string, string][] = [
    [`show ${broken}${dataDirFlag}`, 'the exchange and its findings'],
    [`lint ${id('truncated-args')}${dataDirFlag}`, 'flag the truncated arguments (exit 1: errors found)'],
    [`tokens ${broken}${dataDirFlag}`, 'the token stream (Kimi K2 tokenizer from the Hugging Face Hub, or --tokenizer-dir DIR)'],
    [`export ${broken} --format markdown${dataDirFlag}`, 'a redacted issue body for the provider'],
    [`captures${dataDirFlag}`, 'every capture'],
    [`demo --clear${dataDirFlag}`, 'remove the demo captures'],
  ];
  const width = Math.max(...steps.map(([c]) => c.length));
  io.out('');
  io.out('Dig in:');
  for (const [c, what] of steps) io.out(`  ${cli} ${c.padEnd(width)}  ${what}`);
  io.out('');
  io.out(
    `Your own agent can talk to the demo upstream too: base URL ${demo.baseUrl}, any key, model ${results[0]?.exchange.requestModel ?? ''}.`,
  );
  io.out(`  (\`${cli} agents --port ${demo.proxy.port} --route demo\` prints the setup per agent.)`);
}

async function runDemoAgent(io: CliIO, agent: DemoAgent, demo: DemoProxy, store: CaptureStore, signal: AbortSignal): Promise<void> {
  // Tokenscope's own folder: above dist/ once built, above src/cli/commands/ when run from source.
  const bin = findAgent(agent, process.env, [join(__dirname, '..'), join(__dirname, '..', '..', '..')]);
  io.out('');
  if (!bin) {
    io.out(
      `--agent ${agent}: ${agent} is not installed (not on PATH${agent === 'opencode' ? ', and no opencode binary package beside Tokenscope' : ''}); skipped.`,
    );
    return;
  }
  if (!demoSpeaks(agent)) {
    io.out(`--agent ${agent}: found ${bin}, but the demo upstream speaks OpenAI Chat Completions only and ${agent} does not; skipped.`);
    return;
  }
  io.out(`Running ${agent} (${bin}) against the demo upstream through the proxy, in a throwaway folder:`);
  const before = new Set(store.list().map((x) => x.id));
  // Whole lines only, blank ones dropped, each marked as the agent's.
  let pending = '';
  const lines = (text: string, flush = false) => {
    pending += text;
    const parts = pending.split('\n');
    pending = flush ? '' : parts.pop()!;
    for (const l of parts.map(agentLine)) if (l.trim()) io.out(`  ${agent}│ ${l}`);
  };
  const run = await runAgent(agent, bin, demo.proxy.url, { signal, onOutput: (t) => lines(t) });
  lines('\n', true);
  if (signal.aborted) return;
  await store.idle();
  const mine = store.list().filter((x) => !before.has(x.id) && isDemoCapture(x));
  io.out(`${agent} exited with ${run.code}; its ${mine.length} exchange${mine.length === 1 ? '' : 's'}:`);
  for (const x of mine.reverse()) {
    io.out(`  ${safeLine(exchangeLine(x))}`);
    if (x.repair) io.out(`    repaired: ${safeLine(repairSummary(x.repair))}`);
  }
  if (mine.some((x) => x.repair?.calls.some((c) => c.status === 'delivered'))) {
    io.out(`Repair mode delivered the leaked call to ${agent} as a tool call, so the tool ran; the capture keeps what the upstream sent.`);
  } else if (mine.some((x) => x.summary?.rules.includes('section-unclosed'))) {
    io.out(`${agent} got the call as text, so the tool never ran: the capture above shows why (section-unclosed).`);
  }
}

const demo: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['port', 'data-dir', 'agent'], booleans: ['clear', 'repair'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  if (args.positional.length > 0) throw new UserError(`unexpected argument "${args.positional[0]}"; see --help`);
  const portGiven = args.str('port') !== undefined;
  const port = args.num('port', DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port must be 0–65535, got ${port}`);
  const agent = args.str('agent') ?? 'none';
  if (agent !== 'none' && !(DEMO_AGENTS as readonly string[]).includes(agent))
    throw new UserError(`--agent must be one of ${DEMO_AGENTS.join(', ')} or none, got "${agent}"`);
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const dataDirFlag =
    args.str('data-dir') !== undefined
      ? ` --data-dir ${/^[\w./:@%+=-]+$/.test(dataDir) ? dataDir : `'${dataDir.replace(/'/g, `'\\''`)}'`}`
      : '';

  const ac = new AbortController();
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      ac.abort();
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const store = await openStore(dataDir, { onWarning: (m) => io.err(`tokenscope: ${m}`) }).catch((e: NodeJS.ErrnoException) => {
    throw new UserError(`cannot open the capture store in ${dataDir}: ${e.message}`);
  });
  let session: DemoProxy | undefined;
  try {
    if (args.bool('clear')) {
      const n = await clearDemoCaptures(store);
      io.out(`tokenscope: removed ${n} demo capture${n === 1 ? '' : 's'} from ${dataDir}`);
      return 0;
    }
    const log = (l: string) => {
      if (!l.includes('listening on')) io.err(l);
    };
    const repair = repairFromFlags(args);
    const stage = repair.enabled ? { responseStage: repairStage(() => repair) } : {};
    try {
      session = await startDemoProxy({ store, port, log, ...stage });
    } catch (e) {
      if (portGiven || !(e instanceof UserError) || !/already in use/.test(e.message)) throw e;
      session = await startDemoProxy({ store, port: 0, log, ...stage });
      io.out(`tokenscope: port ${port} is taken (a Tokenscope already running?), so the demo uses port ${session.proxy.port}.`);
    }
    io.out(`Tokenscope demo: the capture proxy on ${session.proxy.url}, in front of a built-in local upstream ("${DEMO_PROVIDER}").`);
    io.out('Nothing leaves this machine and no key is needed.');
    if (repair.enabled) io.out(`Repair mode is on: leaked calls reach the client as tool calls (truncated calls: ${repair.truncated}).`);
    io.out(`Capturing to ${dataDir}`);
    io.out('');
    const results = await replayDemo(session, store);
    io.out(`Replayed ${results.length} exchanges through ${session.baseUrl}:`);
    printResults(io, store, results);
    printNextSteps(io, results, dataDirFlag, session);
    if (agent !== 'none' && !ac.signal.aborted) await runDemoAgent(io, agent as DemoAgent, session, store, ac.signal);
    if (!ac.signal.aborted) {
      io.out('');
      io.out('Serving the demo until Ctrl+C.');
    }
    await stopped;
    return 0;
  } finally {
    await session?.close();
    await store.close();
  }
};
export default demo;

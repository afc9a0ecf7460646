import { UserError } from '../core/model';
import { VERSION } from '../core/version';
import { processIO, type CliIO, type Command } from './io';
import { safeLine } from './terminal';

/** Each command lives in its own module under commands/, loaded on demand. */
const commands: Record<string, { summary: string; load: () => Promise<{ default: Command }> }> = {
  lint: { summary: 'flag broken tool calls in a response, SSE dump, native text or capture', load: () => import('./commands/lint') },
  tokens: { summary: "show the token stream with the model's own tokenizer", load: () => import('./commands/tokens') },
  serve: { summary: 'run the capture proxy', load: () => import('./commands/serve') },
  demo: {
    summary: 'a first look: replay broken tool calls from a built-in local upstream through the proxy',
    load: () => import('./commands/demo'),
  },
  captures: { summary: 'list captured exchanges', load: () => import('./commands/captures') },
  show: { summary: 'show one captured exchange with its findings', load: () => import('./commands/show') },
  agents: { summary: 'print how to start each agent through the proxy', load: () => import('./commands/agents') },
  rerun: { summary: 're-run a captured request on an OpenRouter provider or SGLang', load: () => import('./commands/rerun') },
  compare: { summary: 'run one request on every provider of a model and compare', load: () => import('./commands/compare') },
  verify: { summary: 'K2-Vendor-Verifier-style batch over a JSONL of requests', load: () => import('./commands/verify') },
  export: {
    summary: 'export a capture as a repro bundle, Markdown, curl, HAR, K2VV or promptfoo case',
    load: () => import('./commands/export'),
  },
  import: { summary: 'import a HAR or a repro bundle into the capture store', load: () => import('./commands/import') },
  tail: { summary: 'follow new exchanges from another terminal (--broken: only broken ones)', load: () => import('./commands/tail') },
  watch: {
    summary: 'watch broken exchanges: re-check them on their provider, say fixed or still broken',
    load: () => import('./commands/watch'),
  },
  policy: {
    summary: 'set, list or remove per-model OpenRouter provider policies (applied live by running proxies)',
    load: () => import('./commands/policy'),
  },
  providers: {
    summary: 'the provider scorecard: per model and served provider, tool-call turns, share broken, top rules, TTFT',
    load: () => import('./commands/providers'),
  },
  'export-otlp': {
    summary: 'send stored captures to an OpenTelemetry collector as GenAI spans',
    load: () => import('./commands/export-otlp'),
  },
};

/** Each command's exit codes, printed under its --help (lint states its own). */
const COMMAND_EXIT: Record<string, string> = {
  tokens:
    '0 shown, 2 bad usage or unusable input; with --batch also 1 every input line was unusable, 130 interrupted with Ctrl+C (OUT holds complete lines).',
  serve: '0 stopped with Ctrl+C or SIGTERM, 2 bad usage, a taken port or an unusable --data-dir.',
  captures: '0 listed (also when there are none), 2 bad usage or an unusable --data-dir.',
  show: '0 shown, 2 bad usage or no such capture.',
  agents: '0 printed, 2 bad usage.',
  rerun: '0 the re-run answered, 1 it failed (the failure is recorded as a capture too), 2 bad usage or no such capture.',
  compare: '0 compared, 2 bad usage or unusable input, 130 interrupted with Ctrl+C (what finished is reported).',
  verify: '0 verified, 2 bad usage or unusable input, 130 interrupted with Ctrl+C (what finished is reported).',
  export: '0 exported, 2 bad usage or no such capture.',
  import: '0 imported, 2 bad usage or unusable input.',
  demo: '0 the demo ran (its captures show the broken calls), 2 bad usage, a taken port or an unusable --data-dir.',
  tail: '0 stopped with Ctrl+C or SIGTERM, 2 bad usage or an unusable --data-dir.',
  policy: '0 done, 2 bad usage, a bad slug or model id, no such stored policy (rm), or policies that cannot be written.',
  providers: '0 printed (also when nothing is captured yet), 2 bad usage or an unusable --data-dir.',
  'export-otlp':
    '0 every span was accepted, 1 the collector refused or dropped some (the counts are printed), 2 bad usage or an unusable --data-dir.',
};

/** Every command's name, for `tokenscope --help` and the tests. */
export const COMMAND_NAMES: readonly string[] = Object.keys(commands);

/** Exit codes, the same for every command. */
export const EXIT_CODES = `Exit status:
  0    success (lint: no error-level finding)
  1    lint found an error-level finding; rerun got no usable answer; watch run: a case is still broken;
       export-otlp: the collector dropped spans; tokens --batch: every line was unusable
  2    bad usage or unusable input (unknown option, missing file, bad value), with a one-line message
  130  interrupted (Ctrl+C) during compare, verify or tokens --batch: what finished is still reported
Each command's --help lists its own.`;

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return [
    'usage: tokenscope <command> [options] [--no-color]',
    '',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `tokenscope <command> --help` for the options of one command.',
    'Colour is used on a terminal; --no-color or NO_COLOR=1 turns it off (it is off when piped).',
    '',
    EXIT_CODES,
  ].join('\n');
}

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  // --no-color is understood by every command, anywhere before a `--`.
  const end = argv.indexOf('--') < 0 ? argv.length : argv.indexOf('--');
  if (argv.slice(0, end).some((a) => a === '--no-color' || a === '--no-colour')) {
    argv = [...argv.slice(0, end).filter((a) => a !== '--no-color' && a !== '--no-colour'), ...argv.slice(end)];
    const base = io;
    io = {
      out: (t) => base.out(t),
      err: (t) => base.err(t),
      colour: false,
      progress: base.progress,
      ...(base.write ? { write: (c: string) => base.write!(c) } : {}),
    };
  }
  // `tokenscope help lint` is `tokenscope lint --help`.
  const [name, ...rest] = argv[0] === 'help' && argv[1] ? [argv[1], '--help'] : argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name ? 0 : 2;
  }
  if (name === '--version') {
    io.out(VERSION);
    return 0;
  }
  const cmd = commands[name];
  if (!cmd) {
    io.err(`tokenscope: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  try {
    const mod = await cmd.load();
    const wantsHelp = rest.some((a) => a === '--help' || a === '-h');
    if (!wantsHelp) return await mod.default(rest, io);
    let help = '';
    const code = await mod.default(rest, { ...io, out: (t) => ((help += t), io.out(t)) });
    if (code === 0 && COMMAND_EXIT[name] && !help.includes('Exit status')) io.out(`\nExit status: ${COMMAND_EXIT[name]}`);
    return code;
  } catch (e) {
    if (e instanceof UserError) {
      io.err(`tokenscope ${name}: ${e.message}`);
      return e.exitCode;
    }
    const msg = e instanceof Error ? e.message : String(e);
    io.err(`tokenscope ${name}: ${msg.split('\n')[0]}`);
    if (process.env.TOKENSCOPE_DEBUG) io.err(String((e as Error)?.stack ?? e));
    return 2;
  }
}

/** Entry point of the `tokenscope` binary. */
export function runFromProcess(): void {
  // `tokenscope captures | head`: once the reader has gone, stop quietly like any Unix tool, not with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => process.exit(e.code === 'EPIPE' ? 0 : 2));
  }
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`tokenscope: ${safeLine(e instanceof Error ? e.message : String(e))}\n`);
      process.exitCode = 2;
    },
  );
}

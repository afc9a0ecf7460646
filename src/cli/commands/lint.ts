import { analyzeWithContext } from '../../core/analyze';
import { repeatsOf } from '../../core/checks/collapse';
import type { CheckContext } from '../../core/checks/types';
import { turnReport, type TurnReport } from '../../core/parsed';
import { formats } from '../../core/families/index';
import { UserError, type Analysis } from '../../core/model';
import { parseArgs } from '../args';
import { familiesMapOutput } from '../families-map';
import { paletteOf, type Command } from '../io';
import { loadTurnInput } from '../turn-input';
import { printJson, reportJson } from '../json-out';
import { LINT_FLAGS } from '../preread';
import { fragmentFindings, fragmentInput } from './lint-fragment';
import { lintRequest } from './lint-request';
import { excerpt, formatText } from '../lint-text';

export { excerpt };

const USAGE = `usage: tokenscope lint [--model ID] [--request REQUEST.json] [--family F] [--json] [--data-dir DIR] FILE
       tokenscope lint --request REQUEST.json|- [--model ID] [--family F] [--json]
       tokenscope lint --where content|reasoning|arguments [--tool NAME] [--model ID] [--family F] [--json] FILE

Flags broken tool calls in one model response. FILE is raw model text, a JSON response body, an SSE dump
(OpenAI Chat, Anthropic Messages, OpenAI Responses, SGLang), a repro bundle (*.tokenscope.json), or a capture id.
A capture id gets the capture store's analysis (what \`show\` and the Problems panel report); --model, --family
or --request analyse it again with what they change, and say so on stderr.

With --request and no FILE, lints the request body alone (- reads it from stdin): the history the agent sends
back, for what makes providers answer 400 or degrade: history-tool-order (a tool result not right after the turn
that made the call), history-tool-result-missing (a call without a result, a result without a call),
history-reasoning-missing (a thinking model's tool-call turn sent back without its reasoning),
history-echoed-markers (control tokens echoed back as text), history-kimi-ids (off-format Kimi call ids). With
--json: {"protocol", "model", "family", "familySource", "messages", "findings": [{rule, severity, message,
location}]}.

  --model ID        model id to pick the family when FILE names none (e.g. moonshotai/kimi-k2-0905)
  --request FILE    the request body: enables the tool, schema and history checks
  --family F        force the family (${formats.map((f) => f.id).join(', ')})
  --where FIELD     FILE is a fragment pasted from one field of a structured response (the provider already
                    parsed the turn), judged as that field: content (markup in it leaked out of the calls),
                    reasoning (the reasoning_content), or arguments (the arguments string of one tool call:
                    markup in it, invalid JSON). Without --where, FILE is the model's whole raw output.
  --tool NAME       with --where arguments: the name of the call (else it is unknown)
  --json            print {"family", "familySource", "content", "reasoning", "calls": [{index, id, name,
                    arguments, argumentsJson, complete, start, end}], "providerCalls", "findings": [{rule,
                    severity, message, start, end, location}]}; a finding that stands for the same defect at
                    several places says "(repeated N×)" and adds "repeated": {count, positions: [{start, end,
                    location}]}
  --data-dir DIR    capture store for capture ids (default: TOKENSCOPE_DATA_DIR or ~/.tokenscope)
  --families        print, instead of linting a FILE, the tool-call parsers vLLM, SGLang, llama.cpp and Ollama
                    register and the family that reads each (or why none does); with --json as JSON

Exit status: 0 no error-level finding, 1 at least one, 2 unusable input.`;

const lint: Command = async (argv, io) => {
  const args = parseArgs(argv, LINT_FLAGS);
  if (args.bool('help')) {
    io.out(USAGE);
    return 0;
  }
  if (args.bool('families')) {
    io.out(familiesMapOutput({ json: args.bool('json'), positional: args.positional }));
    return 0;
  }
  if (args.str('where') !== undefined) {
    const fragment = fragmentInput(args);
    const { analysis, ctx } = analyzeWithContext(fragment);
    analysis.findings = fragmentFindings(analysis.findings);
    if (args.bool('json')) printJson(io, reportJson(toJson(analysis, ctx), ctx));
    else io.out(formatText(fragment.label, analysis, ctx, paletteOf(io)));
    return analysis.findings.some((f) => f.severity === 'error') ? 1 : 0;
  }
  if (args.str('tool') !== undefined) throw new UserError('--tool goes with --where arguments');
  if (args.positional.length === 0 && args.str('request') !== undefined) return lintRequest(args, io);
  // A capture id is judged as `show` and the Problems panel judge it: the store's one analysis. Options that change
  // the result (another model, family or request) analyse it again, and say so.
  const changed = (['model', 'family', 'request'] as const).filter((k) => args.str(k) !== undefined);
  const { input, request, family } = await loadTurnInput(args, args.str('data-dir'), changed.length === 0);
  const { analysis, ctx } =
    input.stored ?? analyzeWithContext({ response: input.response, request, model: args.str('model') ?? input.model, family });
  if (input.captureId && changed.length > 0) {
    const flags = changed.map((k) => `--${k}`).join(', ');
    io.err(
      `${input.label}: analysed again for ${flags}; \`tokenscope show ${input.captureId}\` and the Problems panel show the stored analysis`,
    );
  }

  if (args.bool('json')) printJson(io, reportJson(toJson(analysis, ctx), ctx));
  else io.out(formatText(input.label, analysis, ctx, paletteOf(io)));
  return analysis.findings.some((f) => f.severity === 'error') ? 1 : 0;
};
export default lint;

/**
 * The machine-readable shape (stable: scripts and CI consume it): the parse, the provider's calls and the findings. A
 * finding standing for the same defect at several places also carries `repeated` (an added key: readers of the older
 * shape see nothing change).
 */
export function toJson(a: Analysis, ctx?: CheckContext): TurnReport {
  const report = turnReport(a, ctx);
  report.findings = report.findings.map((f, i) => {
    const repeated = repeatsOf(a.findings[i]);
    return repeated ? { ...f, repeated } : f;
  });
  return report;
}

/**
 * `lint --request FILE|-` without a response FILE: the request body alone (from a file, or stdin with `-`), judged by
 * the rules that read the history the agent sent back: tool results out of order or missing, reasoning dropped from
 * tool-call turns, control markers echoed back, off-format Kimi ids.
 */
import { basename } from 'node:path';
import { analyzeRequest } from '../../core/analyze';
import { repeatsOf } from '../../core/checks/collapse';
import { formats } from '../../core/families/index';
import { UserError, type Analysis, type FamilyId, type NormalizedRequest } from '../../core/model';
import type { Args } from '../args';
import { loadRequest } from '../input';
import { paletteOf, type CliIO } from '../io';
import { printJson } from '../json-out';
import { formatText } from '../lint-text';

export function lintRequest(args: Args, io: CliIO): number {
  const file = args.str('request')!;
  const familyId = args.str('family');
  const family = familyId === undefined ? undefined : formats.find((f) => f.id === familyId)?.id;
  if (familyId !== undefined && !family)
    throw new UserError(`--family must be one of ${formats.map((f) => f.id).join(', ')}; got "${familyId}"`);
  const request = loadRequest(file);
  const { analysis } = analyzeRequest({ request, model: args.str('model'), family: family as FamilyId | undefined });
  const label = file === '-' ? 'stdin' : basename(file);
  if (args.bool('json')) printJson(io, requestJson(request, analysis));
  else io.out(formatText(`${label} (${requestLabel(request)})`, analysis, undefined, paletteOf(io)));
  return analysis.findings.some((f) => f.severity === 'error') ? 1 : 0;
}

/** How many messages (or Responses input items) the body holds, as the agent sent them. */
function entries(r: NormalizedRequest): number {
  const body = r.raw as { messages?: unknown; input?: unknown } | null;
  if (Array.isArray(body?.messages)) return body.messages.length;
  if (Array.isArray(body?.input)) return body.input.length;
  return r.messages.length;
}

function requestLabel(r: NormalizedRequest): string {
  const n = entries(r);
  return `${r.protocol} request${r.model ? ` for ${r.model}` : ''}, ${n} message${n === 1 ? '' : 's'}`;
}

/** The machine-readable shape of a request lint (stable: scripts and CI consume it). */
export function requestJson(r: NormalizedRequest, a: Analysis): unknown {
  return {
    protocol: r.protocol,
    model: r.model ?? null,
    family: a.family ?? null,
    familySource: a.familySource ?? 'none',
    messages: entries(r),
    findings: a.findings.map((f) => {
      const repeated = repeatsOf(f);
      return { rule: f.rule, severity: f.severity, message: f.message, location: f.location, ...(repeated && { repeated }) };
    }),
  };
}

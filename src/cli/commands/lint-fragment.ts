/**
 * `lint --where content|reasoning|arguments`: FILE is a fragment pasted from one field of a turn the provider already
 * parsed, judged as that field. Content: markup in it leaked out of the calls (markup-in-content, with the family from
 * --family, --model, the request or the markers). Reasoning: the reasoning_content. Arguments: the arguments string
 * of the turn's one tool call (named by --tool, else unknown): markup in it is markup-in-tool-call, text that is no
 * JSON object is args-invalid-json.
 */
import { basename } from 'node:path';
import { formats } from '../../core/families/index';
import { loadRequest } from '../input';
import {
  UserError,
  type AssistantMessage,
  type FamilyId,
  type Finding,
  type NormalizedRequest,
  type ParsedResponse,
} from '../../core/model';
import type { Args } from '../args';
import { readTextFile } from '../io';

export const FIELDS = ['content', 'reasoning', 'arguments'] as const;
export type Field = (typeof FIELDS)[number];

export interface FragmentInput {
  response: ParsedResponse;
  request?: NormalizedRequest;
  model?: string;
  family?: FamilyId;
  /** How to name the input: the file and the field it stands for. */
  label: string;
}

/** The fragment FILE as a structured response holding it in the field --where names. */
export function fragmentInput(args: Args): FragmentInput {
  const field = args.str('where') as Field;
  if (!FIELDS.includes(field)) throw new UserError(`--where must be one of ${FIELDS.join(', ')}; got "${field}"`);
  const tool = args.str('tool');
  if (tool !== undefined && field !== 'arguments') throw new UserError('--tool goes with --where arguments');
  if (args.positional.length !== 1)
    throw new UserError(args.positional.length === 0 ? 'needs a FILE (see --help)' : `takes one FILE, got ${args.positional.length}`);
  const file = args.positional[0];
  // An editor's final line break is not part of the pasted field.
  const text = readTextFile(file).replace(/\r?\n$/, '');
  if (text.trim() === '' && field !== 'arguments') throw new UserError(`${basename(file)} is empty`);
  const familyId = args.str('family');
  const family = familyId === undefined ? undefined : formats.find((f) => f.id === familyId)?.id;
  if (familyId !== undefined && !family)
    throw new UserError(`--family must be one of ${formats.map((f) => f.id).join(', ')}; got "${familyId}"`);
  const requestFile = args.str('request');
  const model = args.str('model');

  const message: AssistantMessage =
    field === 'content'
      ? { content: text, toolCalls: [] }
      : field === 'reasoning'
        ? { reasoning: text, toolCalls: [] }
        : { toolCalls: [{ index: 0, name: tool ?? '', arguments: text }] };
  const response: ParsedResponse = { protocol: 'openai-chat', streamed: false, terminated: true, events: [], wireIssues: [], message };
  if (model !== undefined) response.model = model;
  const what =
    field === 'arguments' ? `the arguments of ${tool ? `a call to ${tool}` : 'a tool call'}` : `the ${field} of a structured response`;
  return { response, request: requestFile ? loadRequest(requestFile) : undefined, model, family, label: `${basename(file)} (as ${what})` };
}

/** The rules about the whole turn (is it empty, how did it end): a fragment is not the whole turn. */
const TURN_RULES = new Set(['empty-response', 'finish-reason-mismatch', 'stream-unterminated']);

/** The findings that judge the fragment itself. */
export function fragmentFindings(findings: Finding[]): Finding[] {
  return findings.filter((f) => !TURN_RULES.has(f.rule));
}

// Builders for the rule tests: a response or raw text → the CheckContext `analyze` would build → one rule's findings.
import { prepare, type AnalyzeInput } from '../../../src/core/analyze';
import type { Check } from '../../../src/core/checks/types';
import type {
  AssistantMessage,
  Finding,
  HistoryMessage,
  NormalizedRequest,
  ParsedResponse,
  ToolCall,
  ToolDef,
} from '../../../src/core/model';

export const KIMI = 'moonshotai/kimi-k2-0905';

/** A structured response as the wire layer would hand it over (OpenAI Chat, complete, `[DONE]` seen). */
export function response(fields: Partial<Omit<ParsedResponse, 'message'>> & { message?: Partial<AssistantMessage> } = {}): ParsedResponse {
  const { message, ...rest } = fields;
  return {
    protocol: 'openai-chat',
    streamed: false,
    terminated: true,
    events: [],
    wireIssues: [],
    model: KIMI,
    ...rest,
    message: { toolCalls: [], ...message },
  };
}

export function call(name: string, args: string, id?: string, index = 0): ToolCall {
  return id === undefined ? { index, name, arguments: args } : { index, id, name, arguments: args };
}

export function request(tools: ToolDef[], messages: HistoryMessage[] = [{ role: 'user', content: 'hi' }]): NormalizedRequest {
  return { protocol: 'openai-chat', model: KIMI, tools, messages, raw: {} };
}

export function run(check: Check, input: AnalyzeInput): { findings: Finding[]; text: string } {
  const { ctx } = prepare(input);
  return { findings: check.run(ctx), text: ctx.native.text };
}

/** The native text a finding points at. */
export function slice(r: { text: string }, f: Finding): string {
  return r.text.slice(f.start ?? 0, f.end ?? 0);
}

// Real failures quoted in the references (wire-formats.md §4, agents.md §3).
export const K = {
  SECTION_BEGIN: '<|tool_calls_section_begin|>',
  SECTION_END: '<|tool_calls_section_end|>',
  CALL_BEGIN: '<|tool_call_begin|>',
  ARG_BEGIN: '<|tool_call_argument_begin|>',
  CALL_END: '<|tool_call_end|>',
};

/** anomalyco/opencode#1021: the section is never closed. */
export const OPENCODE_1021 = `I'll look at the file.${K.SECTION_BEGIN}${K.CALL_BEGIN}functions.read:0${K.ARG_BEGIN}{"filePath":"src/app.ts"}${K.CALL_END}`;

/** anomalyco/opencode#8851: the thinking text holds the call and ends with a truncated section end. */
export const OPENCODE_8851_REASONING = `The user wants the directory listing. ${K.SECTION_BEGIN} ${K.CALL_BEGIN} functions.bash:0 ${K.ARG_BEGIN} {"command": "ls -la"} ${K.CALL_END} <|tool_calls_section_end|`;

/** anomalyco/opencode#37297: a second call leaked into the arguments of the first. */
export const OPENCODE_37297_ARGS = `{"filePath": "/repo/app ${K.SECTION_BEGIN} ${K.CALL_BEGIN} functions.read:3 ${K.ARG_BEGIN} {"}`;

/** Fireworks kimi-k2p6-turbo (typeclaw PR #344), delivered as content with finish "stop". */
export const FIREWORKS_LEAK = `channel_reply:0${K.ARG_BEGIN}{"text": "Sure, posting it now."}${K.SECTION_END}`;

/** continuedev/continue#11453: XML-style arguments on an OpenAI-compatible endpoint. */
export const CONTINUE_XML_ARGS = '<tool_call><function=ls><parameter=dirPath>src</parameter></function></tool_call>';

/** A healthy Kimi section with one call. */
export function kimiSection(name = 'read', args = '{"filePath":"src/app.ts"}', id = `functions.${name}:0`): string {
  return `${K.SECTION_BEGIN}${K.CALL_BEGIN}${id}${K.ARG_BEGIN}${args}${K.CALL_END}${K.SECTION_END}`;
}

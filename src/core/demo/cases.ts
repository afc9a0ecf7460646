/**
 * The demo's fixed set of exchanges: real failure classes Tokenscope knows, built with the family renderers so the
 * markup is exactly what a Kimi K2 model writes, plus one healthy call for contrast. Each case is what the demo
 * upstream (./upstream.ts) streams back; the demo replay (./replay.ts) sends one request per case through the proxy.
 */
import { detectFamily, type ModelFormat } from '../families/index';
import type { AssistantMessage, ToolCall } from '../model';

export { DEMO_PROVIDER, DEMO_ROUTE } from './mark';
export const DEMO_MODEL = 'moonshotai/kimi-k2-0905';
/** The request header that picks a case; requests without it (a real agent) get the agent scenario. */
export const DEMO_CASE_HEADER = 'x-tokenscope-demo-case';

/** One streamed piece of the answer, in OpenAI Chat delta terms. */
export interface DemoDelta {
  reasoning?: string;
  content?: string;
  /** The first piece of a call carries its id and name; later pieces only more arguments. */
  toolCall?: { id?: string; name?: string; arguments: string };
}

export interface DemoScript {
  deltas: DemoDelta[];
  finishReason: 'stop' | 'tool_calls';
}

export type DemoCaseId = 'section-unclosed' | 'reasoning-markup' | 'truncated-args' | 'healthy';

export interface DemoCase {
  id: DemoCaseId;
  /** What the case shows, in one line. */
  title: string;
  /** The user prompt of its request. */
  prompt: string;
  /** Rule ids the analysis reports for it, in no particular order (none for the healthy call). */
  expectedRules: string[];
  script: DemoScript;
}

/** The grammar of the demo's model (Kimi K2), found from its model id as for any exchange. */
const kimi = demoFormat();

function demoFormat(): ModelFormat {
  const found = detectFamily(DEMO_MODEL);
  if (!found) throw new Error(`no model family matches the demo model ${DEMO_MODEL}`);
  return found.format;
}

/** The one tool every demo request offers. */
export const DEMO_TOOL = {
  type: 'function',
  function: {
    name: 'read',
    description: 'Read a file from the workspace',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
} as const;

const ARGS = '{"path": "README.md"}';

/** Kimi's tool-call markup for `calls`, from the section's begin marker through its end marker (no end of turn). */
export function kimiCallMarkup(calls: ToolCall[]): string {
  const text = kimi.render({ toolCalls: calls }).text;
  const end = kimi.sectionEnd!;
  const at = text.indexOf(end);
  return at < 0 ? text : text.slice(0, at + end.length);
}

/** Splits markup so every marker streams as its own piece, as a provider's detokenizer sends special tokens. */
function markerPieces(text: string): string[] {
  const markers = [...kimi.markers].sort((a, b) => b.length - a.length).map((m) => m.replace(/[|\\^$*+?.()[\]{}]/g, '\\$&'));
  return text.split(new RegExp(`(${markers.join('|')})`)).filter(Boolean);
}

/** Prose as streamed words (each with its leading space after the first). */
function words(text: string): string[] {
  return text.split(/(?= )/);
}

function readCall(callIndex = 0, args = ARGS): ToolCall {
  return { index: 0, id: `functions.read:${callIndex}`, name: 'read', arguments: args };
}

/** The section's markup with its end marker left off, or cut `cut` characters short. */
function sectionWithout(end: 'end' | 'last-char', call: ToolCall): string {
  const markup = kimiCallMarkup([call]);
  const marker = kimi.sectionEnd!;
  return markup.slice(0, markup.length - (end === 'end' ? marker.length : 1));
}

const REASONING = 'The user wants README.md read, so I will call the read tool with its path.';

export const DEMO_CASES: readonly DemoCase[] = [
  {
    id: 'section-unclosed',
    title: 'Kimi K2 tool-call section without its end, leaked into content',
    prompt: 'Read README.md and summarize it. (demo: a provider that leaks the call into content)',
    expectedRules: ['section-unclosed', 'markup-in-content', 'finish-reason-mismatch'],
    script: {
      deltas: [
        ...words(REASONING).map((r) => ({ reasoning: r })),
        ...words("I'll read README.md.").map((c) => ({ content: c })),
        ...markerPieces(sectionWithout('end', readCall())).map((c) => ({ content: c })),
      ],
      finishReason: 'stop',
    },
  },
  {
    id: 'reasoning-markup',
    title: 'Tool-call markup leaked into reasoning, its section end cut one character short',
    prompt: 'Read README.md and summarize it. (demo: a provider that puts the call in reasoning)',
    // Nothing but reasoning came back: the agent gets an empty turn (empty-response, a warning).
    expectedRules: ['markup-in-reasoning', 'marker-truncated', 'section-unclosed', 'finish-reason-mismatch', 'empty-response'],
    script: {
      deltas: [...words(REASONING), ...markerPieces(sectionWithout('last-char', readCall()))].map((r) => ({ reasoning: r })),
      finishReason: 'stop',
    },
  },
  {
    id: 'truncated-args',
    title: 'A structured tool call whose JSON arguments are cut short',
    prompt: 'Read README.md and summarize it. (demo: a provider that truncates arguments)',
    expectedRules: ['args-invalid-json'],
    script: {
      deltas: [
        ...words(REASONING).map((r) => ({ reasoning: r })),
        { content: "I'll read README.md." },
        { toolCall: { id: 'functions.read:0', name: 'read', arguments: '' } },
        ...['{"path', '": "READ'].map((a) => ({ toolCall: { arguments: a } })),
      ],
      finishReason: 'tool_calls',
    },
  },
  {
    id: 'healthy',
    title: 'A healthy tool call, for contrast',
    prompt: 'Read README.md and summarize it. (demo: a healthy provider)',
    expectedRules: [],
    script: {
      deltas: [
        ...words(REASONING).map((r) => ({ reasoning: r })),
        { content: "I'll read README.md." },
        { toolCall: { id: 'functions.read:0', name: 'read', arguments: '' } },
        ...['{"path', '": "READ', 'ME.md"}'].map((a) => ({ toolCall: { arguments: a } })),
      ],
      finishReason: 'tool_calls',
    },
  },
];

export function demoCase(id: string): DemoCase | undefined {
  return DEMO_CASES.find((c) => c.id === id);
}

/** The case the demo opens first: the section that never ends. */
export const BROKEN_CASE: DemoCaseId = 'section-unclosed';

// ── the agent scenario ───────────────────────────────────────────────────────────────────────────────────────

interface RequestTool {
  type?: string;
  function?: { name?: string; parameters?: { properties?: Record<string, { type?: unknown } | undefined>; required?: unknown } };
  /** Anthropic / Responses style. */
  name?: string;
}

/** Tools an agent is likely to offer, most telling first: reading a file shows a repaired call best. */
const PREFERRED_TOOLS = ['read', 'list', 'glob', 'ls', 'bash'];

/** Arguments a file-reading agent tool accepts: every required string filled with a value that fits its name. */
function argumentsFor(tool: RequestTool['function']): string {
  const props = tool?.parameters?.properties ?? {};
  const required = Array.isArray(tool?.parameters?.required) ? (tool!.parameters!.required as string[]) : Object.keys(props).slice(0, 1);
  const value = (key: string): unknown => {
    const type = props[key]?.type;
    if (type === 'number' || type === 'integer') return 1;
    if (type === 'boolean') return false;
    if (/path|file/i.test(key)) return 'README.md';
    if (/command|cmd/i.test(key)) return 'ls';
    if (/pattern|glob/i.test(key)) return '*';
    return 'README.md';
  };
  return JSON.stringify(Object.fromEntries(required.map((k) => [k, value(k)])));
}

/**
 * What the demo upstream answers a real agent: with tools, the Kimi section without its end leaked into content
 * (the agent prints the markup, or runs the call when the proxy repairs it); after a tool result, or without tools,
 * a short line of prose so the agent's turn ends.
 */
export function agentScript(body: { messages?: { role?: string; tool_calls?: unknown[] }[]; tools?: RequestTool[] }): DemoScript {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1)?.role;
  const tools = (Array.isArray(body.tools) ? body.tools : [])
    .map((t) => t.function ?? { name: t.name })
    .filter((f) => typeof f?.name === 'string');
  if (tools.length === 0 || last === 'tool') {
    const text = last === 'tool' ? 'Done: that was the Tokenscope demo. Every exchange is in the capture store.' : 'Tokenscope demo.';
    return { deltas: words(text).map((content) => ({ content })), finishReason: 'stop' };
  }
  const tool = PREFERRED_TOOLS.map((n) => tools.find((t) => t.name === n)).find(Boolean) ?? tools[0];
  const callIndex = messages.reduce((n, m) => n + (Array.isArray(m.tool_calls) ? m.tool_calls.length : 0), 0);
  const call: ToolCall = { index: 0, id: `functions.${tool!.name}:${callIndex}`, name: tool!.name!, arguments: argumentsFor(tool) };
  const markup = kimiCallMarkup([call]);
  return {
    deltas: [
      ...words(`I'll call ${call.name}.`).map((content) => ({ content })),
      ...markerPieces(markup.slice(0, markup.length - kimi.sectionEnd!.length)).map((content) => ({ content })),
    ],
    finishReason: 'stop',
  };
}

/** The whole turn a script streams, for non-streamed answers and token counts. */
export function scriptMessage(s: DemoScript): AssistantMessage {
  const m: AssistantMessage = { reasoning: '', content: '', toolCalls: [] };
  for (const d of s.deltas) {
    m.reasoning += d.reasoning ?? '';
    m.content += d.content ?? '';
    if (d.toolCall) {
      if (d.toolCall.name !== undefined)
        m.toolCalls.push({ index: m.toolCalls.length, id: d.toolCall.id, name: d.toolCall.name, arguments: '' });
      const call = m.toolCalls.at(-1);
      if (call) call.arguments += d.toolCall.arguments;
    }
  }
  return { reasoning: m.reasoning || undefined, content: m.content || undefined, toolCalls: m.toolCalls };
}

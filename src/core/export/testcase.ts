/**
 * The exchange as a test case for the eval tools people already run:
 *
 * - K2 Vendor Verifier (MoonshotAI/K2-Vendor-Verifier): one line of its `samples.jsonl`, i.e. a Chat Completions
 *   request body. K2VV passes every key of the line to `client.chat.completions.create(**request)`, so only keys
 *   that call accepts are kept; OpenRouter routing goes to its `--extra-body` flag, in the command we suggest.
 * - promptfoo: a self-contained `promptfooconfig.yaml` replaying the conversation with the same tools and
 *   parameters, asserting `is-valid-openai-tools-call` and `finish-reason`.
 */
import { UserError } from '../model';
import { OPENROUTER_API, OPENROUTER_KEY_ENV, pinProvider } from '../upstream/openrouter';
import { guessLine } from './curl';
import { jsonText } from './json-text';
import { sealExport } from './redaction';
import { facts, isOpenRouter, replayPin, requestJson, type Repro } from './repro';

/** Keyword arguments of the OpenAI Python SDK's `chat.completions.create` that a request body may carry. */
const CHAT_CREATE_PARAMS = new Set([
  'messages',
  'model',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'reasoning_effort',
  'response_format',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
]);

/** The request as a Chat Completions body, or a UserError naming why this exchange cannot be one. */
function chatRequest(r: Repro, what: string): Record<string, unknown> {
  const protocol = r.analysis.request?.protocol ?? r.analysis.response.protocol;
  const body = requestJson(r);
  if (!body || !Array.isArray(body.messages) || (protocol !== 'openai-chat' && protocol !== 'unknown')) {
    throw new UserError(
      `${what} needs a Chat Completions request (messages); this exchange (${r.exchange.method} ${r.exchange.path}) is ${protocol === 'unknown' ? 'not one' : protocol}`,
    );
  }
  return body;
}

/** Keys of the body `create()` accepts, and the rest (provider routing and other upstream extensions). */
function splitBody(body: Record<string, unknown>): { standard: Record<string, unknown>; extra: Record<string, unknown> } {
  const standard: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) (CHAT_CREATE_PARAMS.has(k) ? standard : extra)[k] = v;
  return { standard, extra };
}

/** OpenRouter routing for a replay: the request's own `provider` object with the pin applied. */
function pinnedProvider(r: Repro, body: Record<string, unknown>): unknown {
  if (!isOpenRouter(r.exchange)) return undefined;
  const pin = replayPin(r);
  return pin ? pinProvider(body, pin.slug).provider : body.provider;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface K2vvSample {
  /** One `samples.jsonl` line (no trailing newline). */
  line: string;
  /** Keys left out because `create()` would reject them. */
  dropped: string[];
  /** A `tool_calls_eval.py` command running the sample against the same model and provider pin. */
  command: string;
}

export function k2vvSample(r: Repro): K2vvSample {
  const body = chatRequest(r, 'a K2 Vendor Verifier sample');
  const { standard, extra } = splitBody(body);
  const provider = pinnedProvider(r, body);
  const dropped = Object.keys(extra);
  const model = typeof body.model === 'string' ? body.model : (facts(r).model ?? 'MODEL');
  const base = isOpenRouter(r.exchange) ? OPENROUTER_API : r.exchange.upstreamUrl.replace(/\/chat\/completions\/?$/, '');
  const keyEnv = isOpenRouter(r.exchange) ? OPENROUTER_KEY_ENV : 'OPENAI_API_KEY';
  const command = [
    `python tool_calls_eval.py samples.jsonl --model ${shellQuote(model)} --base-url ${shellQuote(base)} --api-key "$${keyEnv}"`,
    provider ? ` --extra-body ${shellQuote(jsonText({ provider }))}` : '',
  ].join('');
  return { line: sealExport(jsonText(standard)), dropped, command };
}

/** The JSONL line alone, newline-terminated (what `export --format k2vv` writes). */
export function writeK2vv(r: Repro): string {
  return k2vvSample(r).line + '\n';
}

// ---------------------------------------------------------------------------------------------------------------
// promptfoo

/**
 * A YAML scalar. Strings are written double-quoted with JSON escapes, which YAML reads the same way; characters
 * YAML does not allow raw (C1 controls, line and paragraph separators, BOM) are escaped too.
 */
function scalar(v: unknown): string {
  if (typeof v === 'string') return yamlSafe(JSON.stringify(v));
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return 'null';
}

/** JSON text with the characters YAML does not allow raw escaped (they only occur inside its strings). */
function yamlSafe(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Past this many levels a value is written in flow style, as its JSON on one line (JSON is YAML's flow syntax):
 * block style indents every level, and a tool schema nesting thousands of levels would be megabytes of spaces and as
 * deep a recursion here.
 */
const BLOCK_DEPTH = 64;

function key(k: string): string {
  return /^[A-Za-z_][\w-]*$/.test(k) ? k : scalar(k);
}

/** Block-style YAML for JSON values (objects, arrays, scalars), `indent` spaces deep; flow style below BLOCK_DEPTH. */
export function toYaml(v: unknown, indent = 0, depth = 0): string {
  const pad = ' '.repeat(indent);
  if (depth >= BLOCK_DEPTH && v !== null && typeof v === 'object') return `${pad}${yamlSafe(jsonText(v))}`;
  if (Array.isArray(v)) {
    if (v.length === 0) return `${pad}[]`;
    return v
      .map((item) => {
        if (item !== null && typeof item === 'object' && Object.keys(item).length > 0) {
          return `${pad}- ${toYaml(item, indent + 2, depth + 1).trimStart()}`;
        }
        return `${pad}- ${toYaml(item, 0, depth + 1)}`;
      })
      .join('\n');
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    if (entries.length === 0) return `${pad}{}`;
    return entries
      .map(([k, x]) => {
        if (x !== null && typeof x === 'object' && Object.keys(x).length > 0)
          return `${pad}${key(k)}:\n${toYaml(x, indent + 2, depth + 1)}`;
        return `${pad}${key(k)}: ${toYaml(x, 0, depth + 1)}`;
      })
      .join('\n');
  }
  return `${pad}${scalar(v)}`;
}

/** Model settings promptfoo's OpenAI-style providers take by name; everything else rides in `passthrough`. */
const PROVIDER_CONFIG = new Set([
  'temperature',
  'max_tokens',
  'max_completion_tokens',
  'top_p',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'stop',
  'tools',
  'tool_choice',
  'response_format',
  'parallel_tool_calls',
  'reasoning_effort',
]);

/** Keys promptfoo sets itself or that make no sense in an eval (it calls without streaming). */
const OMITTED = new Set(['model', 'messages', 'stream', 'stream_options', 'n']);

export function writePromptfoo(r: Repro): string {
  const body = chatRequest(r, 'a promptfoo test case');
  const f = facts(r);
  const model = typeof body.model === 'string' ? body.model : f.model;
  if (!model) throw new UserError('a promptfoo test case needs the request to name its model');
  const config: Record<string, unknown> = {};
  const passthrough: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (OMITTED.has(k) || k === 'provider') continue;
    (PROVIDER_CONFIG.has(k) ? config : passthrough)[k] = v;
  }
  const provider = pinnedProvider(r, body);
  if (provider) passthrough.provider = provider;
  if (Object.keys(passthrough).length > 0) config.passthrough = passthrough;

  let providerId: string;
  if (isOpenRouter(r.exchange)) providerId = `openrouter:${model}`;
  else {
    providerId = `openai:chat:${model}`;
    config.apiBaseUrl = r.exchange.upstreamUrl.replace(/\/chat\/completions\/?$/, '');
    config.apiKeyEnvar = `${r.exchange.route.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_API_KEY`;
  }

  const toolsOffered = Array.isArray(body.tools) && body.tools.length > 0;
  const expectCall = f.callsAttempted > 0;
  const asserts: Record<string, unknown>[] = [];
  if (toolsOffered && expectCall) asserts.push({ type: 'is-valid-openai-tools-call' });
  asserts.push({ type: 'finish-reason', value: expectCall ? 'tool_calls' : (f.finishReason ?? 'stop') });

  const what = f.primary ? `${f.primary.rule}: ${f.primary.message}` : 'no findings';
  const doc = {
    description: `Tokenscope capture ${r.exchange.id}: ${model}${f.provider ? ` served by ${f.provider}` : ''}`,
    prompts: ['{{ messages | dump }}'],
    providers: [{ id: providerId, config }],
    tests: [
      {
        description: `Captured ${new Date(r.exchange.startedAt).toISOString()} (finish_reason ${f.finishReason ?? 'none'}): ${what}`,
        vars: { messages: body.messages },
        assert: asserts,
      },
    ],
  };
  const keyEnv = isOpenRouter(r.exchange) ? OPENROUTER_KEY_ENV : String(config.apiKeyEnvar);
  const head = [
    `# promptfoo test case exported by Tokenscope ${r.tokenscopeVersion} from capture ${r.exchange.id}.`,
    `# Run: ${keyEnv}=… npx promptfoo@latest eval -c THIS_FILE.yaml`,
  ];
  const pin = isOpenRouter(r.exchange) ? replayPin(r) : undefined;
  if (pin?.derivedFrom) head.push(`# ${guessLine({ ...pin, derivedFrom: pin.derivedFrom })}`);
  return sealExport(`${head.join('\n')}\n${toYaml(doc)}\n`, { patterns: r.patterns });
}

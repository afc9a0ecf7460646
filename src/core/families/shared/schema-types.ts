/**
 * Arguments typed by the request's tool schema, for the grammars that carry no types (XML-style parameters:
 * Qwen3-Coder and the XML it shares with Qwen3.5/3.6, MiMo and Step-3.5, GLM, MiniMax, Seed-OSS, Step-3…).
 *
 * Without a schema a parameter text is read generically (`paramsToJson`: `42` is a number, `abc` a string), so a
 * string parameter that happens to read as a number cannot be told from one. The engines type it by the schema,
 * and so does this: vLLM `vllm/tool_parsers/qwen3coder_tool_parser.py` `_convert_param_value` (the conversion its
 * Seed-OSS, MiMo and Step-3.5 parsers copy), SGLang `step3_detector.py` `get_argument_type`:
 * - `null` (any case) is null, whatever the type;
 * - a key the schema does not list, or `string`/`str`/`text`/`varchar`/`char`/`enum`, is the text as written;
 * - `int…`/`uint…`/`long…`/`short…`/`unsigned…` is an integer, `num…`/`float…` a number (integral values as integers),
 *   each falling back to the text when it is not one;
 * - `boolean`/`bool`/`binary` is `true` exactly when the text is `true` (any case);
 * - `object`/`array`/`dict…`/`list…` and anything else is JSON, falling back to the text (vLLM then tries Python's
 *   `literal_eval`, which has no JSON counterpart here).
 * A type list or `anyOf`/`oneOf` with one non-null type is that type. A parameter whose grammar gives its type
 * (DSML `string="…"`, Kimi K3 `type="…"`) keeps the grammar's reading.
 *
 * The parameter texts stay beside the call they belong to (a weak map keyed by the parsed `ToolCall`), so a parse
 * still has one shape for every family and the typing happens where the request is known.
 */
import type { ToolCall, ToolDef } from '../../model';
import type { ParamType } from './xml-args';

export type ParamText = readonly [key: string, raw: string, type?: ParamType];

const TEXTS = new WeakMap<ToolCall, readonly ParamText[]>();

/** Keeps the parameter texts a call's arguments were built from. */
export function keepParamTexts(call: ToolCall, params: readonly ParamText[]): void {
  if (params.length) TEXTS.set(call, params);
}

/**
 * The arguments of `call` typed by the schema of its tool in `tools`; the call's own arguments when the call did not
 * come from XML parameters, or the request has no schema with `properties` for it.
 */
export function schemaArguments(call: ToolCall, tools: readonly ToolDef[] | undefined): string {
  const params = TEXTS.get(call);
  if (!params || !tools || tools.length === 0) return call.arguments;
  const props = propertiesOf(tools.find((t) => t.name === call.name)?.parameters);
  if (!props) return call.arguments;
  let generic: Record<string, unknown> | undefined;
  const obj: Record<string, unknown> = {};
  for (const [key, raw, type] of params) {
    if (type) {
      // The grammar typed it: the value the parse gave (the generic arguments hold it).
      generic ??= JSON.parse(call.arguments) as Record<string, unknown>;
      obj[key] = generic[key];
    } else obj[key] = convert(raw, props[key]);
  }
  return JSON.stringify(obj);
}

function propertiesOf(schema: unknown): Record<string, unknown> | undefined {
  if (!isObject(schema)) return undefined;
  const props = schema.properties;
  return isObject(props) ? props : undefined;
}

/** The one type a property declares (lower-cased), `string` when it declares none. */
function declaredType(cfg: unknown): string {
  if (!isObject(cfg)) return 'string';
  const t = cfg.type;
  if (typeof t === 'string') return t.trim().toLowerCase();
  if (Array.isArray(t)) {
    const named = t.filter((x): x is string => typeof x === 'string' && x.toLowerCase() !== 'null');
    return named.length === 1 ? named[0].trim().toLowerCase() : 'object';
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const subs = cfg[key];
    if (Array.isArray(subs)) {
      const types = new Set(subs.map(declaredType).filter((x) => x !== 'null'));
      return types.size === 1 ? [...types][0] : 'object';
    }
  }
  return 'string';
}

const STRING_TYPES = new Set(['string', 'str', 'text', 'varchar', 'char', 'enum']);
const INT_PREFIXES = ['int', 'uint', 'long', 'short', 'unsigned'];
const INTEGER = /^[-+]?\d+$/;
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

function convert(raw: string, cfg: unknown): unknown {
  const t = raw.trim();
  if (t.toLowerCase() === 'null') return null;
  if (cfg === undefined) return raw;
  const type = declaredType(cfg);
  if (STRING_TYPES.has(type)) return raw;
  if (INT_PREFIXES.some((p) => type.startsWith(p))) return INTEGER.test(t) ? Number(t) : raw;
  if (type.startsWith('num') || type.startsWith('float')) {
    if (!NUMBER.test(t)) return raw;
    const n = Number(t);
    return Number.isFinite(n) ? n : raw;
  }
  if (type === 'boolean' || type === 'bool' || type === 'binary') return t.toLowerCase() === 'true';
  try {
    return JSON.parse(t);
  } catch {
    return raw;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

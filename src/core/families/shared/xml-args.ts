/**
 * XML-style arguments (qwen3-coder, glm45, minimax-m2 and the families like them): parameters carried as
 * text, their canonical compact-JSON `arguments`, the shared call reader and the parameter renderer.
 */
import type { AssistantMessage, NativeText } from '../../model';
import type { ParseOut, RenderOut } from './build';
import type { RenderOptions } from './format';
import { endsInMarker, findTruncated, skipWs, trimRange, type MarkerHit } from './text';
import { keepParamTexts } from './schema-types';
import { callUnclosed, expectClosers, renderStart, type ThinkTags } from './turn';

/**
 * XML-argument families (qwen3-coder, glm45, minimax-m2) carry parameters as text. Their canonical
 * `arguments` is the compact JSON of an object: a value that reads as JSON other than a string
 * (`42`, `true`, `null`, `{…}`, `[…]`) is that value, anything else stays the string as written.
 * Without the tool schema a string `"42"` cannot be told from the number; `schemaArguments` (schema-types.ts)
 * types the values by the request's schema where the request is known.
 */
export function paramsToJson(params: readonly (readonly [string, string, ParamType?])[]): string {
  const obj: Record<string, unknown> = {};
  for (const [k, raw, type] of params) obj[k] = type === 'string' ? raw : type === 'json' ? jsonValue(raw) : paramValue(raw);
  return JSON.stringify(obj);
}

/**
 * How the grammar types a value, when it says: `string` (DSML `string="true"`, Kimi K3 `type="string"`) is the text
 * as written; `json` is JSON-decoded, falling back to the text when it is not JSON (vLLM's behaviour for both).
 */
export type ParamType = 'string' | 'json';

function jsonValue(raw: string): unknown {
  try {
    return JSON.parse(raw.trim());
  } catch {
    return raw;
  }
}

function paramValue(raw: string): unknown {
  const t = raw.trim();
  if (/^(?:[-\d{[]|true$|false$|null$)/.test(t)) {
    try {
      const v: unknown = JSON.parse(t);
      if (typeof v !== 'string') return v;
    } catch {
      // Not JSON: the text itself.
    }
  }
  return raw;
}

/**
 * The other way: a JSON object's members as parameter texts (strings as written, others as JSON), or
 * undefined when `args` is not a JSON object (render then writes the raw text so it survives a round trip).
 */
/** The keys of a JSON object whose values are strings. */
function stringKeys(args: string): Set<string> {
  const v = JSON.parse(args) as Record<string, unknown>;
  return new Set(Object.keys(v).filter((k) => typeof v[k] === 'string'));
}

export function jsonToParams(args: string): [string, string][] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(args);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  return Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)]);
}

/** One parameter of an XML-argument call, with its raw value text. */
export interface ParamGrammar {
  /** Reads a parameter head at `pos` (`<parameter=K>`): the key and where its value starts. */
  head(out: ParseOut, pos: number, to: number): { key: string; valueStart: number; type?: ParamType } | undefined;
  /** Text that starts a head, so a value missing its close still ends at the next parameter. */
  headStart: string;
  /** Marker that closes a value. */
  close: string;
  /** Drop one newline on each side of a value (Qwen3-Coder writes `>\nV\n</parameter>`). */
  newlines: boolean;
  /**
   * `reject`: the engines refuse a call that writes one key twice (vLLM minicpm5, k2_horizon), so it is malformed.
   * Otherwise the later value wins, as JSON decoding and vLLM's hy_v4 parser have it.
   */
  duplicates?: 'reject';
}

/**
 * The parameters in [from, to). Stops at the first text that is not a parameter (`rest` then tells where).
 * A value without its close runs to the next head or to `to` and is reported through `unclosed`.
 */
export function xmlParams(
  out: ParseOut,
  from: number,
  to: number,
  g: ParamGrammar,
  markers: readonly string[],
): { params: [string, string, ParamType?][]; range?: [number, number]; rest: number; unclosed?: { expectedAt: number } } {
  const { text } = out;
  const params: [string, string, ParamType?][] = [];
  let pos = skipWs(text, from, to);
  let first: number | undefined;
  let last = pos;
  let unclosed: { expectedAt: number } | undefined;
  while (pos < to) {
    const head = g.head(out, pos, to);
    if (!head) break;
    first ??= pos;
    const close = out.find([g.close], head.valueStart, to)?.start ?? -1;
    const nextHead = out.find([g.headStart], head.valueStart, to)?.start ?? -1;
    let valueEnd: number;
    if (close >= 0 && (nextHead < 0 || close < nextHead)) {
      valueEnd = close;
      last = close + g.close.length;
    } else if (nextHead >= 0) {
      // The next parameter starts before this one closed: keep both, flag the missing close.
      valueEnd = nextHead;
      last = trimRange(text, head.valueStart, valueEnd)[1];
      // A close that drifted (`</parameter1>`, `</parameter_x>`, `</parameter` cut short of its `>`) ends the value, as
      // SGLang's qwen3_coder detector reads it: not part of the value.
      const drift = driftedClose(text, head.valueStart, last, g.close);
      if (drift >= 0) valueEnd = drift;
      const what = drift >= 0 ? `is closed by ${JSON.stringify(text.slice(drift, last))}, not ${g.close}` : `lacks ${g.close}`;
      out.problem('malformed-call', `parameter '${head.key}' ${what}`, pos, last, { marker: g.close, callIndex: out.calls.length });
    } else {
      valueEnd = to;
      const cut = findTruncated(text, [g.close, ...markers], head.valueStart, to).find((c) => c.end === to);
      if (cut) {
        out.problem('marker-truncated', `${cut.marker} is cut short`, cut.start, cut.end, {
          marker: cut.marker,
          callIndex: out.calls.length,
        });
        valueEnd = cut.start;
      }
      last = cut ? cut.end : trimRange(text, head.valueStart, valueEnd)[1];
      unclosed = { expectedAt: cut ? cut.start : last };
    }
    let value = text.slice(head.valueStart, valueEnd);
    if (g.newlines) value = value.replace(/^\n/, '').replace(/\n$/, '');
    params.push(head.type ? [head.key, value, head.type] : [head.key, value]);
    pos = skipWs(text, last, to);
    if (unclosed) break;
  }
  return { params, range: first === undefined ? undefined : [first, last], rest: pos, unclosed };
}

/** Where a misspelt close of `close` (`</parameter1>` for `</parameter>`) ends the value [from, to), or -1. */
function driftedClose(text: string, from: number, to: number, close: string): number {
  const m = /^<\/([\w-]+)>$/.exec(close);
  if (!m) return -1;
  // A misspelt close is short: look for it only near the end of the value.
  const near = Math.max(from, to - 128);
  const at = text.slice(near, to).lastIndexOf(`</${m[1]}`);
  if (at < 0) return -1;
  const pos = near + at;
  return new RegExp(`^</${m[1]}[\\w-]*>?\\s*$`).test(text.slice(pos, to)) ? pos : -1;
}

/** One XML-argument call as the family located it (qwen3-coder, glm45, minimax-m2). */
export interface XmlCall {
  start: number;
  nameRange: [number, number];
  /** The markup that should have closed the name (`>`, `">`) when it is missing. */
  nameUnclosed?: string;
  bodyStart: number;
  /** The marker that ends the body (`</function>`, the next call…); absent when the text ends first. */
  stop?: MarkerHit;
  /** Markers expected after the parameters, in order (`</function>`, `</tool_call>`). */
  closers: readonly string[];
  /** Defects already found (the call is then also `malformed-call`). */
  defects: string[];
}

/**
 * Reads the parameters of an XML-argument call, adds the call with canonical JSON arguments, its segments
 * and problems. A body without parameters keeps its raw text as the arguments. Returns where the call ends.
 */
export function xmlCall(out: ParseOut, c: XmlCall, grammar: ParamGrammar, markers: readonly string[]): number {
  const { text } = out;
  const index = out.calls.length;
  const defects = [...c.defects];
  const to = c.stop ? c.stop.start : text.length;
  const params = xmlParams(out, c.bodyStart, to, grammar, markers);
  let restRange = trimRange(text, params.rest, to);
  // A closer cut off by the end of the text is not stray text: the closers below report it when long
  // enough to name.
  if (!c.stop && endsInMarker(text, restRange[0], [...c.closers, ...markers])) restRange = [restRange[0], restRange[0]];
  const rest = text.slice(...restRange);
  let args: string;
  let argRange = params.range;
  if (params.params.length) {
    args = paramsToJson(params.params);
    if (rest) defects.push('text after the parameters');
  } else {
    args = rest || '{}';
    if (rest) {
      argRange = restRange;
      if (c.stop) defects.push('the body is not parameters');
    }
  }
  const bodyEnd = Math.max(params.range?.[1] ?? c.bodyStart, rest ? restRange[1] : 0, c.nameRange[1]);
  let end = bodyEnd;
  let missing: string | undefined;
  let expectedAt = bodyEnd;
  if (c.nameUnclosed) {
    // Cut off inside the head, or the head never closed before other markup.
    if (c.stop) defects.push(`name not closed by ${c.nameUnclosed}`);
    else missing = c.nameUnclosed;
  } else if (params.unclosed && !c.stop) {
    missing = grammar.close;
    expectedAt = params.unclosed.expectedAt;
  } else {
    if (params.unclosed) defects.push(`parameter '${params.params.at(-1)![0]}' lacks ${grammar.close}`);
    const tail = expectClosers(out, bodyEnd, c.closers, markers, index);
    end = tail.end;
    missing = tail.missing;
    expectedAt = tail.expectedAt ?? end;
    defects.push(...tail.skipped.map((s) => `no ${s}`));
  }
  if (grammar.duplicates === 'reject') {
    const seen = new Set<string>();
    for (const [k] of params.params) {
      if (seen.has(k)) {
        defects.push(`parameter '${k}' written twice`);
        break;
      }
      seen.add(k);
    }
  }
  // A call that closed with no name (`<tool_call>   </tool_call>`): every engine drops it.
  if (!missing && c.nameRange[1] <= c.nameRange[0]) defects.push('no function name');
  out.addCall(text.slice(...c.nameRange), args);
  // The texts, for typing by the request's schema (schema-types.ts).
  if (params.params.length) keepParamTexts(out.calls[index], params.params);
  out.seg('call', c.start, end, index);
  out.seg('call-name', c.nameRange[0], c.nameRange[1], index);
  if (argRange) out.seg('arguments', argRange[0], argRange[1], index);
  if (missing) callUnclosed(out, index, c.start, end, missing, expectedAt);
  if (defects.length) out.problem('malformed-call', `call ${index}: ${defects.join('; ')}`, c.start, end, { callIndex: index });
  return end;
}

/**
 * Writes an XML-argument call's parameters, one per line, as an `arguments` segment (without the line
 * break after the last one). Arguments that are not a JSON object are written raw.
 */
export function renderParams(
  out: RenderOut,
  callIndex: number,
  args: string,
  param: (key: string, value: string, isString: boolean) => string,
  separator = '\n',
): void {
  const params = jsonToParams(args);
  const strings = params ? stringKeys(args) : undefined;
  const body = params ? params.map(([k, v]) => param(k, v, strings!.has(k))).join(separator) : args;
  out.put(body, 'arguments', callIndex);
  if (body) out.put(params ? separator : '\n');
}

/**
 * The parameters of a GLM-style call written `KEY_OPEN key KEY_CLOSE VALUE_OPEN value VALUE_CLOSE`, whitespace allowed
 * between a key and its value (Poolside, IQuest Q1). A key cut off, or never closed, leaves no value: it ends the body.
 */
export function keyValueParams(keyOpen: string, keyClose: string, valueOpen: string, valueClose: string): ParamGrammar {
  return {
    headStart: keyOpen,
    close: valueClose,
    newlines: false,
    head: (out, pos, to) => {
      const { text } = out;
      if (!text.startsWith(keyOpen, pos)) return undefined;
      const keyStart = pos + keyOpen.length;
      const keyEnd = out.find([keyClose], keyStart, to)?.start;
      if (keyEnd === undefined) return { key: text.slice(keyStart, to).trim(), valueStart: to };
      const at = skipWs(text, keyEnd + keyClose.length, to);
      return { key: text.slice(keyStart, keyEnd).trim(), valueStart: text.startsWith(valueOpen, at) ? at + valueOpen.length : at };
    },
  };
}

/**
 * A call block whose name runs from its start marker to a line break or the first markup, followed by the parameters
 * (Poolside, IQuest Q1, Solar Open2). The body ends at the first of `bodyStops`; `close` closes the block.
 * `flagNameless`: a block with no name that one of `bodyStops` ends is reported as malformed before its parameters
 * are read (IQuest Q1, Solar Open2), not only once it has closed.
 */
export interface NameLineCall {
  bodyStops: readonly string[];
  close: string;
  params: ParamGrammar;
  markers: readonly string[];
  flagNameless: boolean;
}

/** The starter `parse` for a `NameLineCall` block. */
export function nameLineCall(g: NameLineCall): (out: ParseOut, start: number, hit: MarkerHit) => number {
  return (out, start, hit) => {
    const { text } = out;
    const stop = out.find(g.bodyStops, hit.end);
    const to = stop ? stop.start : text.length;
    const nameStop = out.find(['\n', '<'], hit.end, to);
    const nameRange = trimRange(text, hit.end, nameStop ? nameStop.start : to);
    const bodyStart = skipWs(text, nameRange[1], to);
    const defects = !g.flagNameless || nameRange[1] > nameRange[0] || !stop ? [] : ['no function name'];
    return xmlCall(out, { start, nameRange, bodyStart, stop, closers: [g.close], defects }, g.params, g.markers);
  };
}

/** How a `NameLineCall` family writes a turn. */
export interface NameLineRender {
  open: string;
  close: string;
  /** The end of turn. */
  end: string;
  /** One parameter as written. */
  param: (key: string, value: string) => string;
  /** Between the name and the first parameter, and between parameters. */
  separator: string;
  think: { newlines: boolean; tags?: ThinkTags };
}

/** Renders a turn of `NameLineCall` blocks: reasoning, content, then `open NAME params close` per call. */
export function renderNameLineCalls(g: NameLineRender, m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close } = renderStart(m, opts, g.think);
  m.toolCalls.forEach((c, i) => {
    out.wrap(
      'call',
      () => {
        // Arguments that are not parameters go on their own line, so the name still ends.
        out
          .put(g.open)
          .put(c.name, 'call-name', i)
          .put(jsonToParams(c.arguments) ? g.separator : '\n');
        renderParams(out, i, c.arguments, g.param, g.separator);
        if (close.call(i)) out.put(g.close);
      },
      i,
    );
  });
  if (close.turn) out.put(g.end, 'end');
  return out.done();
}

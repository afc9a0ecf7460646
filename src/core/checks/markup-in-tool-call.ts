import type { Finding, Segment } from '../model';
import type { Check, CheckContext } from './types';
import { callLabel, familyName, findMarkers, ownerOf, quoteMarkers, segmentFor, unambiguous, type MarkerHit } from './scan';

/**
 * anomalyco/opencode#37297 (`"/repo/app <|tool_calls_section_begin|> <|tool_call_begin|> functions.read:3 …` inside
 * arguments), vLLM PRs #32633 / #35906 (`manage_cart<|channel|>commentary` as a tool name).
 *
 * Markup inside the JSON strings of the arguments is judged by its shape (see `swallowed`): a provider's parser that
 * reads one parameter too far leaves the end of that parameter and the start of the next inside the value
 * (`"a.ts</arg_value><arg_key>content</arg_key><arg_value>…"`), which no correct parse of the model's output can
 * produce; markup the model writes as data (a file that documents XML, a parser's source) is left alone.
 */
const check: Check = {
  id: 'markup-in-tool-call',
  severity: 'error',
  title: 'Control markup inside a tool call',
  why: "The model's control tokens end up in a call's name or arguments: the call fails, and agents that quote the bad input in their error message feed the tokens back to the model, so failures cascade.",
  run: (ctx) => {
    const out: Finding[] = [];
    ctx.message.toolCalls.forEach((call, i) => {
      const fields: [string, string | undefined, Segment['kind']][] = [
        ['name', call.name, 'call-name'],
        ['id', call.id, 'call-id'],
        ['arguments', call.arguments, 'arguments'],
      ];
      for (const [field, value, kind] of fields) {
        if (!value) continue;
        const strings = field === 'arguments' ? jsonStrings(value) : undefined;
        // Outside the JSON strings (or in arguments that are no JSON) every marker counts. Inside a string, a
        // special-token marker (`<|…|>`) still does (anomalyco/opencode#37297); tag-style text only when its shape is
        // that of a parameter or call the provider's parser swallowed.
        const hits = findMarkers(value).filter((h) => !strings || /^<[|｜]/.test(h.marker) || !inString(strings, h.start));
        const swallow = strings ? swallowed(ctx, value, strings) : undefined;
        const all = [...hits, ...(swallow?.hits ?? [])].sort((a, b) => a.start - b.start);
        if (all.length === 0) continue;
        // Another family's tag-style markers (`<tool_call>`) outside strings may be code the agent is writing: those only warn.
        const severe = swallow !== undefined || hits.some((h) => unambiguous(h, ctx));
        const family = familyName(ownerOf(all, ctx.format?.id, () => value));
        const label = callLabel(i, field === 'name' ? undefined : call.name);
        const message = swallow
          ? `The arguments of ${label} hold ${family} tool-call markup inside ${swallow.where} (${quoteMarkers(swallow.hits)}): ` +
            `the provider's parser ran past the end of that ${swallow.key ? 'key' : 'value'} and swallowed the next parameter or call, ` +
            'so the call runs with wrong arguments and the markup travels back to the model in the next turn.'
          : `The ${field} of ${label} contain${field === 'arguments' ? '' : 's'} ${family} control markup (${quoteMarkers(all)}); ` +
            'the call is unusable and the markup travels back to the model in the next turn.';
        out.push({
          rule: check.id,
          severity: severe ? 'error' : 'warning',
          message,
          location: `tool_calls[${i}].${field}`,
          ...range(ctx, segmentFor(ctx, kind, i), value, all),
        });
      }
    });
    return out;
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Markup inside the JSON strings of the arguments

/** One string literal of a JSON text: its range (quotes included) and whether it is an object key. */
interface JsonString {
  start: number;
  end: number;
  key: boolean;
}

/** The string literals of a valid JSON text; undefined when the text is no JSON (then every marker in it counts). */
function jsonStrings(json: string): JsonString[] | undefined {
  try {
    JSON.parse(json);
  } catch {
    return undefined;
  }
  const out: JsonString[] = [];
  for (let i = json.indexOf('"'); i >= 0; i = json.indexOf('"', i + 1)) {
    const start = i;
    // The closing quote: the next one not escaped by an odd run of backslashes.
    for (i = json.indexOf('"', i + 1); i > 0; i = json.indexOf('"', i + 1)) {
      let k = i - 1;
      while (json[k] === '\\') k--;
      if ((i - 1 - k) % 2 === 0) break;
    }
    if (i < 0) break;
    let j = i + 1;
    while (j < json.length && (json[j] === ' ' || json[j] === '\n' || json[j] === '\r' || json[j] === '\t')) j++;
    out.push({ start, end: i + 1, key: json[j] === ':' });
  }
  return out;
}

/** A string literal decoded, with the offset in the JSON text of each of its characters (and of its end). */
function decode(json: string, s: JsonString): { text: string; at: number[] } {
  let text = '';
  const at: number[] = [];
  for (let i = s.start + 1; i < s.end - 1; i++) {
    if (json[i] === '\\') {
      const esc = json[i + 1];
      text += esc === 'u' ? String.fromCharCode(parseInt(json.slice(i + 2, i + 6), 16)) : (ESCAPES[esc] ?? esc);
      at.push(i);
      i += esc === 'u' ? 5 : 1;
    } else {
      text += json[i];
      at.push(i);
    }
  }
  at.push(s.end - 1);
  return { text, at };
}

/** Whether `offset` lies inside one of the string literals (sorted by position): a binary search. */
function inString(strings: JsonString[], offset: number): boolean {
  let lo = 0;
  let hi = strings.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (offset < strings[mid].start) hi = mid - 1;
    else if (offset >= strings[mid].end) lo = mid + 1;
    else return true;
  }
  return false;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };

/** A tag of call syntax: `<parameter=`, `</arg_value>`, `<invoke name="`, `</｜DSML｜invoke>` → its element and whether it closes. */
function tagOf(marker: string): { name: string; close: boolean } | undefined {
  const m = /^<(\/?)([^\s=>"|<]+(?: [^\s=>"|<]+)?)(?:>|=| name=")$/.exec(marker);
  if (!m) return undefined;
  return { name: m[2].replace(/ name$/, ''), close: m[1] === '/' };
}

/** Elements that hold one argument's value: the element a swallowing parser must have read past. */
const VALUE_ELEMENT = /(?:^|[:｜ ])(?:parameter|arg_value)$/;

/**
 * The markup in the arguments' strings that shows a swallow, or undefined when there is none. The rule:
 * - in an object key, any tool-call marker: a key is a parameter name, and markup in it means the parser cut the
 *   key in the wrong place (`"path</arg_key><arg_value>a.ts"`);
 * - in a value, the call syntax going on from one parameter to the next: a closing tag followed, with only
 *   whitespace and other closing tags between, by an opening tag (`</arg_value><arg_key>`, `</parameter>\n<parameter=`,
 *   `</function></tool_call><tool_call>`), where that closer has no opener in the string or that opener no closer.
 *   A parser that reads past the end of a value always leaves that trace: the value's own closer with no opener
 *   before it, then the next element (or the next element left open at the end of the value). Text the model writes
 *   as data (a file documenting the format, a template) has those tags in pairs, and is not reported;
 * - in a value, the closer of the analysed family's own value element (`</arg_value>` for GLM, `</parameter>` for
 *   Qwen3-Coder, MiniMax, Seed-OSS) with no opener before it: every parser of the dialect ends the value at that
 *   tag, so it can only be inside the value when the provider's parser went past it. Other lone tags (`</arg_key>`
 *   or `<parameter=` alone, another family's closers) can be data, an edit of a parser's source, and are left alone.
 */
function swallowed(ctx: CheckContext, json: string, strings: JsonString[]): { hits: MarkerHit[]; where: string; key: boolean } | undefined {
  const own = new Set(ctx.format?.toolMarkers ?? []);
  let lastKey: string | undefined;
  for (const s of strings) {
    // Every marker holds one of these characters (or is Phi-4's `functools`): most strings need no decoding.
    const raw = json.slice(s.start + 1, s.end - 1);
    const plain = !/[<>[\]]|functools/.test(raw);
    if (s.key) lastKey = plain || !raw.includes('\\') ? raw : (JSON.parse(json.slice(s.start, s.end)) as string);
    if (plain) continue;
    const { text, at } = decode(json, s);
    const found = findMarkers(text).filter((h) => h.tool);
    if (found.length === 0) continue;
    const inJson = (h: MarkerHit): MarkerHit => ({ ...h, start: at[h.start], end: at[h.end] });
    if (s.key) return { hits: found.map(inJson), where: `the key ${shortQuote(text)}`, key: true };

    const tags = found
      .map((h) => ({ h, tag: tagOf(h.marker) }))
      .filter((t): t is { h: MarkerHit; tag: { name: string; close: boolean } } => t.tag !== undefined);
    const unmatched = new Set<MarkerHit>();
    const open: { h: MarkerHit; name: string }[] = [];
    for (const { h, tag } of tags) {
      if (!tag.close) open.push({ h, name: tag.name });
      else {
        const at = open.map((o) => o.name).lastIndexOf(tag.name);
        if (at < 0) unmatched.add(h);
        else for (const o of open.splice(at)) if (o.name !== tag.name) unmatched.add(o.h);
      }
    }
    for (const o of open) unmatched.add(o.h);
    if (unmatched.size === 0) continue;

    const evidence: MarkerHit[] = [];
    for (let k = 0; k < tags.length; k++) {
      if (!tags[k].tag.close) continue;
      let n = k + 1;
      let gapFrom = tags[k].h.end;
      while (n < tags.length && /^\s*$/.test(text.slice(gapFrom, tags[n].h.start)) && tags[n].tag.close) gapFrom = tags[n++].h.end;
      if (
        n < tags.length &&
        !tags[n].tag.close &&
        /^\s*$/.test(text.slice(gapFrom, tags[n].h.start)) &&
        (unmatched.has(tags[k].h) || unmatched.has(tags[n].h))
      ) {
        evidence.push(tags[k].h, tags[n].h);
      }
    }
    for (const h of unmatched) {
      const tag = tagOf(h.marker)!;
      if (tag.close && own.has(h.marker) && VALUE_ELEMENT.test(tag.name)) evidence.push(h);
    }
    if (evidence.length === 0) continue;
    const hits = [...new Set(evidence)].sort((a, b) => a.start - b.start).map(inJson);
    return { hits, where: lastKey === undefined ? 'a string value' : `the value of ${shortQuote(lastKey)}`, key: false };
  }
  return undefined;
}

function shortQuote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 39)}…` : s);
}

/** Offsets of the hits in the native text: exact when the segment holds the value verbatim, else the whole segment. */
function range(ctx: CheckContext, seg: Segment | undefined, value: string, hits: MarkerHit[]): { start?: number; end?: number } {
  if (!seg) return {};
  const text = ctx.native.text.slice(seg.start, seg.end);
  const at = text.indexOf(value);
  if (at >= 0) return { start: seg.start + at + hits[0].start, end: seg.start + at + hits[hits.length - 1].end };
  return { start: seg.start, end: seg.end };
}

export default check;

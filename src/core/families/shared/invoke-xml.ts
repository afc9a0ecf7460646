/**
 * The invoke-style XML dialects (MiniMax-M2 `<minimax:tool_call><invoke name="…">`, MiniMax M3's namespaced tags, DeepSeek
 * DSML `<｜DSML｜invoke name="…">`): a section of `…invoke name="NAME">` elements, one parameter element per key. The
 * families differ in their markers, how a parameter is written and read, and what separates content from the section;
 * the turn grammar and the render are the same and live here.
 */
import type { AssistantMessage, FamilyId, NativeText } from '../../model';
import type { RenderOptions } from './format';
import type { ParseOut } from './build';
import { parseSection, renderStart, type SectionGrammar, type Starter, type ThinkTags, type TurnGrammar } from './turn';
import { trimRange } from './text';
import { renderParams, xmlCall, type ParamGrammar } from './xml-args';

export interface InvokeMarkers {
  sectionBegin: string;
  sectionEnd: string;
  invokeOpen: string;
  invokeClose: string;
}

/** The section grammar and its two starters (the section begin, and an invoke found without one). */
export function invokeStarters(m: InvokeMarkers, end: string, markers: readonly string[], call: SectionGrammar['call']): Starter[] {
  const section: SectionGrammar = { ends: [m.sectionEnd], callBegin: m.invokeOpen, breaks: [end, m.sectionBegin], markers, call };
  return [
    { marker: m.sectionBegin, parse: (out: ParseOut, start, hit) => parseSection(out, section, start, hit) },
    { marker: m.invokeOpen, parse: (out: ParseOut, start) => parseSection(out, section, start) },
  ];
}

/** The turn grammar of an invoke dialect: reasoning may start inside `<think>` (or the dialect's `think` tags), `end` ends the turn. */
export function invokeGrammar(
  family: FamilyId,
  m: InvokeMarkers,
  end: string,
  markers: readonly string[],
  toolMarkers: readonly string[],
  call: SectionGrammar['call'],
  think?: ThinkTags,
): TurnGrammar {
  return { family, toolMarkers, markers, implicitThink: true, think, ends: [end], starters: invokeStarters(m, end, markers, call) };
}

export interface InvokeRender extends InvokeMarkers {
  end: string;
  /** Newlines around the reasoning (`<think>\n…\n</think>`). */
  thinkNewlines: boolean;
  /** The reasoning tags, when not `<think>…</think>`. */
  thinkTags?: ThinkTags;
  /** What separates content from the section. */
  beforeSection: string;
  /** One parameter element. */
  param: (key: string, value: string, isString: boolean) => string;
}

/** The render: reasoning, content, then the section with one invoke per line, and the end of turn. */
export function renderInvokes(d: InvokeRender, m: AssistantMessage, opts?: RenderOptions): NativeText {
  const { out, close, hasContent } = renderStart(m, opts, { newlines: d.thinkNewlines, tags: d.thinkTags });
  if (m.toolCalls.length) {
    if (hasContent) out.put(d.beforeSection);
    out.wrap('section', () => {
      out.put(`${d.sectionBegin}\n`);
      m.toolCalls.forEach((c, i) => {
        out.wrap(
          'call',
          () => {
            out.put(d.invokeOpen).put(c.name, 'call-name', i).put('">\n');
            renderParams(out, i, c.arguments, d.param);
            if (close.call(i)) out.put(d.invokeClose);
          },
          i,
        );
        if (close.call(i)) out.put('\n');
      });
      if (close.turn) out.put(d.sectionEnd);
    });
  }
  if (close.turn) out.put(d.end, 'end');
  return out.done();
}

/** `PREFIX` + quoted name + `">` at `pos`: the name range and where the head ends. */
export function quotedHead(
  out: ParseOut,
  pos: number,
  prefix: string,
  to: number,
): { name: [number, number]; end: number; closed: boolean } {
  const { text } = out;
  const nameStart = pos + prefix.length;
  const close = out.find(['">', '\n', '<'], nameStart, to);
  if (close?.marker === '">') return { name: [nameStart, close.start], end: close.end, closed: true };
  const nameEnd = close ? close.start : to;
  return { name: trimRange(text, nameStart, nameEnd), end: nameEnd, closed: false };
}

/** `PREFIX` + quoted name + attributes + `>` at `pos`: the name range, the attributes, where the head ends. */
export function attrHead(
  out: ParseOut,
  pos: number,
  prefix: string,
  to: number,
): { name: [number, number]; attrs: string; end: number; closed: boolean } {
  const { text } = out;
  const nameStart = pos + prefix.length;
  const quote = out.find(['"', '\n', '<'], nameStart, to);
  if (quote?.marker !== '"') {
    const nameEnd = quote ? quote.start : to;
    return { name: trimRange(text, nameStart, nameEnd), attrs: '', end: nameEnd, closed: false };
  }
  const gt = out.find(['>', '\n', '<'], quote.end, to);
  if (gt?.marker !== '>') return { name: [nameStart, quote.start], attrs: '', end: gt ? gt.start : to, closed: false };
  return { name: [nameStart, quote.start], attrs: text.slice(quote.end, gt.start), end: gt.end, closed: true };
}

/** Parameters written `OPEN KEY">VALUE CLOSE` (`<parameter name="KEY">VALUE</parameter>`), the value as written. */
export function quotedParams(open: string, close: string): ParamGrammar {
  return {
    headStart: open,
    close,
    newlines: false,
    head: (out, pos, to) => {
      if (!out.text.startsWith(open, pos)) return undefined;
      const head = quotedHead(out, pos, open, to);
      return { key: out.text.slice(...head.name), valueStart: head.closed ? head.end : to };
    },
  };
}

/** How one `<invoke name="…">` element of a dialect is read. */
export interface InvokeCall {
  invokeOpen: string;
  invokeClose: string;
  /** The section's opener, named when an invoke stands outside one. */
  sectionBegin: string;
  /** The markers that end an invoke's body when its close is missing. */
  bodyStops: readonly string[];
  markers: readonly string[];
  params: ParamGrammar;
  /** The invoke's head (default `quotedHead`: the name in quotes, then `">`). */
  head?: (out: ParseOut, pos: number, prefix: string, to: number) => { name: [number, number]; end: number; closed: boolean };
}

/** One `<invoke name="…">` from `start`; `sectioned` is false when no section opened. */
export function invokeCall(out: ParseOut, start: number, sectioned: boolean, d: InvokeCall): number {
  const stop = out.find(d.bodyStops, start + d.invokeOpen.length);
  const head = (d.head ?? quotedHead)(out, start, d.invokeOpen, stop ? stop.start : out.text.length);
  return xmlCall(
    out,
    {
      start,
      nameRange: head.name,
      nameUnclosed: head.closed ? undefined : '">',
      bodyStart: head.end,
      stop,
      closers: [d.invokeClose],
      defects: sectioned ? [] : [`${d.invokeOpen}…"> outside ${d.sectionBegin}`],
    },
    d.params,
    d.markers,
  );
}

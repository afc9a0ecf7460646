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
import { renderParams } from './xml-args';

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

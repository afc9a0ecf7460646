/**
 * What the argument rules share: every call's arguments parsed as JSON once per analysis, the calls cut off (whose
 * arguments are incomplete by definition), and where a call's arguments sit in the native text.
 */
import { schemaArguments } from '../families/shared/schema-types';
import { cutShort } from '../wire/index';
import { segmentFor, structuralProblems } from './scan';
import type { CheckContext } from './types';

export type ArgsParse =
  | { ok: true; value: unknown }
  | { ok: false; error: string /** Offset of the syntax error in the arguments text, when JSON.parse says. */; position?: number };

const argsCache = new WeakMap<CheckContext, ArgsParse[]>();

/** JSON.parse of every call's arguments, once per analysis (the JSON and the schema rules both need it). */
export function parsedArguments(ctx: CheckContext): ArgsParse[] {
  const cached = argsCache.get(ctx);
  if (cached) return cached;
  const out = ctx.message.toolCalls.map((c): ArgsParse => {
    try {
      // XML-parameter calls typed by the request's schema, as the engines type them (families/shared/schema-types.ts).
      return { ok: true, value: JSON.parse(schemaArguments(c, ctx.request?.tools)) };
    } catch (e) {
      const error = (e as Error).message;
      const pos = /position (\d+)/.exec(error);
      return { ok: false, error, position: pos ? Number(pos[1]) : undefined };
    }
  });
  argsCache.set(ctx, out);
  return out;
}

/**
 * Indices of calls cut off, whose arguments are incomplete by definition: in raw text those the parser reported;
 * in a response cut short (no terminal event, finish `length`/`error`/`abort`) the last call, which was streaming
 * when it stopped. The rule that explains the cut (call-unclosed, stream-unterminated, finish-reason-mismatch)
 * reports them.
 */
export function unclosedCalls(ctx: CheckContext): Set<number> {
  const out = new Set<number>();
  if (ctx.native.source !== 'raw') {
    const calls = ctx.message.toolCalls.length;
    if (calls > 0 && ctx.response && cutShort(ctx.response)) out.add(calls - 1);
    return out;
  }
  for (const p of structuralProblems(ctx)) {
    if (p.code === 'call-unclosed' && p.callIndex !== undefined && p.family === ctx.parsed?.family) out.add(p.callIndex);
  }
  return out;
}

/** The native-text range of a call's arguments, narrowed to `[from, to)` of the value when the text holds it verbatim. */
export function argumentsRange(ctx: CheckContext, index: number, from?: number, to?: number): { start?: number; end?: number } {
  const seg = segmentFor(ctx, 'arguments', index);
  if (!seg) return {};
  const value = ctx.message.toolCalls[index]?.arguments ?? '';
  if (from === undefined || value.length === 0 || ctx.native.text.slice(seg.start, seg.end) !== value) {
    return { start: seg.start, end: seg.end };
  }
  const s = Math.min(from, value.length - 1);
  const e = Math.min(Math.max(to ?? s + 1, s + 1), value.length);
  return { start: seg.start + s, end: seg.start + e };
}

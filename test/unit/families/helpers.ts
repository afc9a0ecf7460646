import assert from 'node:assert/strict';
import type { AssistantMessage, ParsedNative, Segment, SegmentKind } from '../../../src/core/model';

/** Which kinds may contain which: section ⊃ call ⊃ (call-id | call-name | arguments), call-id ⊃ call-name. */
const PARENTS: Partial<Record<SegmentKind, SegmentKind[]>> = {
  call: ['section'],
  'call-id': ['call'],
  'call-name': ['call', 'call-id'],
  arguments: ['call'],
};

/** Segments are within bounds, sorted, and either disjoint or properly nested as allowed. */
export function assertSegments(text: string, segments: readonly Segment[]): void {
  const stack: Segment[] = [];
  let prev: Segment | undefined;
  for (const s of segments) {
    const where = `${s.kind} [${s.start}, ${s.end}) in ${JSON.stringify(text.slice(0, 200))}`;
    assert.ok(s.start >= 0 && s.start < s.end && s.end <= text.length, `out of bounds or empty: ${where}`);
    if (prev) assert.ok(prev.start < s.start || (prev.start === s.start && prev.end >= s.end), `not sorted: ${where}`);
    prev = s;
    while (stack.length && stack[stack.length - 1].end <= s.start) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) {
      assert.ok(s.end <= parent.end, `overlaps ${parent.kind} [${parent.start}, ${parent.end}): ${where}`);
      assert.ok(PARENTS[s.kind]?.includes(parent.kind), `${s.kind} may not sit inside ${parent.kind}: ${where}`);
      if (parent.callIndex !== undefined) assert.equal(s.callIndex, parent.callIndex, `call index differs from parent: ${where}`);
    } else {
      assert.ok(!['call-id', 'call-name', 'arguments'].includes(s.kind), `${s.kind} outside a call: ${where}`);
    }
    if (['call', 'call-id', 'call-name', 'arguments'].includes(s.kind)) assert.ok(s.callIndex !== undefined, `no callIndex: ${where}`);
    stack.push(s);
  }
}

/** Problems are within bounds; call indexes refer to recovered calls. */
export function assertProblems(p: ParsedNative): void {
  for (const pr of p.problems) {
    assert.ok(pr.start >= 0 && pr.start <= pr.end && pr.end <= p.text.length, `problem out of bounds: ${JSON.stringify(pr)}`);
    if (pr.expectedAt !== undefined)
      assert.ok(pr.expectedAt >= 0 && pr.expectedAt <= p.text.length, `expectedAt out of bounds: ${JSON.stringify(pr)}`);
    if (pr.callIndex !== undefined)
      assert.ok(pr.callIndex < p.message.toolCalls.length, `problem names a missing call: ${JSON.stringify(pr)}`);
  }
}

/** The slices of all segments of `kind` (for one call when given). */
export function slices(p: { text: string; segments: readonly Segment[] }, kind: SegmentKind, callIndex?: number): string[] {
  return p.segments
    .filter((s) => s.kind === kind && (callIndex === undefined || s.callIndex === callIndex))
    .map((s) => p.text.slice(s.start, s.end));
}

export function codes(p: ParsedNative): string[] {
  return p.problems.map((x) => x.code);
}

/** Message without ids (families other than Kimi carry none). */
export function withoutIds(m: AssistantMessage): AssistantMessage {
  return { ...m, toolCalls: m.toolCalls.map(({ id: _id, ...c }) => c) };
}

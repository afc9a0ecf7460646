import type { Check } from './types';
import { idleEnd } from './stream-unterminated';
import { at } from './wire-findings';

/** MoonshotAI/Kimi-K2#128 (an empty `<|im_end|>` right after `</think>`), sgl-project/sglang#23341 (empty content, stop). */
const check: Check = {
  id: 'empty-response',
  severity: 'error',
  title: 'Empty response',
  why: 'An empty turn looks like the model finished with nothing to say: agents stop the session without an error.',
  run: (ctx) => {
    const r = ctx.response;
    const empty = r?.wireIssues.filter((w) => w.code === 'empty-body') ?? [];
    if (empty.length > 0) {
      const why = (w: (typeof empty)[number]) =>
        r?.cutBy === 'idle' ? `the upstream sent its headers and then nothing: ${idleEnd(r.idleSeconds)}` : w.message;
      return empty.map((w) => ({
        rule: check.id,
        severity: check.severity,
        message: `The response body is empty${at(w)}: ${why(w)}`,
        location: 'wire',
      }));
    }
    // Errors and cut streams have their own rules; raw text that is empty or blank is no turn to judge (nothing to point at).
    if (r ? r.error || !r.terminated : ctx.native.text.trim() === '') return [];
    const m = ctx.message;
    if (m.toolCalls.length > 0 || m.content?.trim()) return [];
    const reasoned = m.reasoning?.trim() ? ' (only reasoning)' : '';
    const finish = r ? `, finish_reason ${r.finishReason ?? 'absent'}` : '';
    return [
      {
        rule: check.id,
        severity: 'warning',
        message: `The model ended the turn with no content and no tool call${reasoned}${finish}.`,
        location: 'content',
      },
    ];
  },
};

export default check;

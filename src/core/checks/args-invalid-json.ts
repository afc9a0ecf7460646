import type { Finding } from '../model';
import type { Check } from './types';
import { argumentsRange, parsedArguments, unclosedCalls } from './arguments';
import { callLabel } from './scan';

/** Markup that marks XML-style arguments (Qwen3-Coder, GLM, MiniMax, Hermes) where JSON was expected. */
const XML_ARGS = /^\s*<(?:tool_call>|function=|parameter=|arg_key>|invoke\b|minimax:tool_call>)/;

/**
 * continuedev/continue#11453 (`<tool_call><function=ls><parameter=dirPath>src…` as arguments), anomalyco/opencode#20650
 * (`JSON parsing failed … Unterminated string`), anomalyco/opencode#1111.
 */
const check: Check = {
  id: 'args-invalid-json',
  severity: 'error',
  title: 'Arguments are not a JSON object',
  why: 'Agents JSON.parse the arguments: anything else fails the call (or silently becomes `{}`), and the error they send back often confuses the model further.',
  run: (ctx) => {
    const out: Finding[] = [];
    const calls = ctx.message.toolCalls;
    const skip = unclosedCalls(ctx);
    parsedArguments(ctx).forEach((parsed, i) => {
      if (skip.has(i)) return; // call-unclosed already says the arguments were cut off
      const call = calls[i];
      const label = callLabel(i, call.name);
      const found = (severity: Finding['severity'], message: string, from?: number, to?: number): void => {
        out.push({ rule: check.id, severity, message, location: `tool_calls[${i}].arguments`, ...argumentsRange(ctx, i, from, to) });
      };
      if (call.arguments.trim() === '') {
        found('warning', `The arguments of ${label} are empty; agents expect a JSON object (\`{}\` for none) and some reject the call.`);
      } else if (!parsed.ok) {
        const xml = XML_ARGS.exec(call.arguments);
        if (xml) {
          found(
            'error',
            `The arguments of ${label} are XML-style markup (${xml[0].trim()}…), not JSON: the server passed the model's native format through and the agent will read them as \`{}\` or fail.`,
            xml.index,
            xml.index + xml[0].length,
          );
        } else {
          found(
            'error',
            `The arguments of ${label} are not valid JSON (${parsed.error}); ${call.arguments.length} characters received.`,
            parsed.position ?? call.arguments.length,
          );
        }
      } else if (typeof parsed.value === 'string' && /^\s*[[{]/.test(parsed.value)) {
        found('error', `The arguments of ${label} are a JSON string holding JSON (double-encoded); agents expect the object itself.`);
      } else if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
        const kind = parsed.value === null ? 'null' : Array.isArray(parsed.value) ? 'an array' : `a ${typeof parsed.value}`;
        found('error', `The arguments of ${label} are ${kind}, not a JSON object.`);
      }
    });
    return out;
  },
};

export default check;

import type { Finding, ToolDef } from '../model';
import type { Check } from './types';
import { argumentsRange, parsedArguments } from './arguments';
import { callLabel } from './scan';
import { validatorFor } from './schema-validators';

/** K2 Vendor Verifier's schema accuracy: share of tool calls whose arguments pass the tool's JSON schema. */
const check: Check = {
  id: 'args-schema',
  severity: 'error',
  title: "Arguments do not match the tool's schema",
  why: 'Agents validate arguments against the tool schema (OpenCode: "expected string, received object") and reject the call, costing a turn and often derailing the model.',
  run: (ctx) => {
    const tools = ctx.request?.tools;
    if (!tools || tools.length === 0) return [];
    const byName = new Map<string, ToolDef>(tools.map((t) => [t.name, t]));
    const calls = ctx.message.toolCalls;
    const out: Finding[] = [];
    parsedArguments(ctx).forEach((parsed, i) => {
      const call = calls[i];
      const schema = byName.get(call.name)?.parameters;
      // Non-JSON or non-object arguments are args-invalid-json's finding; there is nothing to validate.
      if (!parsed.ok || !isObject(parsed.value) || !isObject(schema)) return;
      const location = `tool_calls[${i}].arguments`;
      const validate = validatorFor(schema);
      if (validate instanceof Error) {
        out.push({
          rule: check.id,
          severity: 'info',
          message: `The schema of tool ${call.name} could not be compiled (${validate.message.split('\n')[0]}); its arguments were not checked.`,
          location,
        });
        return;
      }
      if (validate(parsed.value)) return;
      const err = validate.errors?.[0];
      const path = err?.instancePath || '/';
      const detail = err
        ? `${err.message ?? 'invalid'}${describe(err.keyword, err.params, valueAt(parsed.value, err.instancePath))}`
        : 'invalid';
      const key = err?.instancePath.split('/').pop();
      const at = key ? call.arguments.indexOf(JSON.stringify(decodePointer(key))) : -1;
      out.push({
        rule: check.id,
        severity: check.severity,
        message: `The arguments of ${callLabel(i, call.name)} fail the tool's JSON schema at ${path}: ${detail}.`,
        location,
        ...(at >= 0 ? argumentsRange(ctx, i, at, at + JSON.stringify(decodePointer(key!)).length) : argumentsRange(ctx, i)),
      });
    });
    return out;
  },
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decodePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const token of pointer.split('/').slice(1))
    v = isObject(v) || Array.isArray(v) ? (v as Record<string, unknown>)[decodePointer(token)] : undefined;
  return v;
}

/** What Ajv's message leaves out: the offending property, the allowed values, the type received. */
function describe(keyword: string, params: Record<string, unknown>, value: unknown): string {
  if (typeof params.additionalProperty === 'string') return ` (${params.additionalProperty})`;
  if (Array.isArray(params.allowedValues)) return ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})`;
  if (keyword === 'type') return `, got ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`;
  return '';
}

export default check;

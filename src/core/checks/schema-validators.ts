/**
 * Compiled JSON-schema validators for the tools' argument schemas, shared by the args-schema rule and repair mode.
 *
 * Compiling is the costly part (Ajv generates a function per schema), and an agent sends the same tool list on every
 * request, so a validator is compiled once per distinct schema and kept:
 * - by the schema object itself (a weak map: the calls of one request, and every rule that looks, reuse it at once);
 * - by a digest of the schema's JSON (an equal schema in the next request's tool list), in a bounded least-recently-used
 *   table; a validator that leaves the table is also removed from Ajv, whose own cache holds every schema it compiled.
 * `addUsedSchema: false` keeps schemas with an `$id` out of Ajv's registry, so two tools (or two requests) may send
 * different schemas with the same `$id`. `strict: false` because agents send schemas with vendor keywords and unknown
 * formats.
 */
import { createHash } from 'node:crypto';
import type Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';

let instance: Ajv | undefined;

/**
 * Ajv, loaded and made on first use: most turns carry no tool schema, and loading Ajv's modules is a fair part of a
 * short CLI run's startup.
 */
function ajv(): Ajv {
  if (!instance) {
    const Ajv = (require('ajv') as typeof import('ajv')).default;
    instance = new Ajv({ strict: false, allErrors: false, validateFormats: false, logger: false, addUsedSchema: false });
  }
  return instance;
}

/** Distinct schemas kept compiled at most. */
export const MAX_VALIDATORS = 256;

interface Entry {
  validator: ValidateFunction | Error;
  /** The object Ajv compiled (its cache key), to remove it from Ajv's cache on eviction. */
  compiled?: object;
}

const byObject = new WeakMap<object, Entry>();
const byDigest = new Map<string, Entry>();
let compiles = 0;

/** The validator of `schema`, or the error that compiling it gave (a schema Ajv cannot read). */
export function validatorFor(schema: object): ValidateFunction | Error {
  const known = byObject.get(schema);
  if (known) return known.validator;
  const digest = createHash('sha256').update(JSON.stringify(schema)).digest('base64');
  let entry = byDigest.get(digest);
  if (entry) {
    // Most recently used last.
    byDigest.delete(digest);
  } else {
    entry = compile(schema);
    if (byDigest.size >= MAX_VALIDATORS) evictOldest();
  }
  byDigest.set(digest, entry);
  byObject.set(schema, entry);
  return entry.validator;
}

function compile(schema: object): Entry {
  compiles++;
  // `$schema` would make Ajv look up a meta-schema by URL (draft 2020-12 is not loaded); validation does not need it.
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  try {
    return { validator: ajv().compile(rest), compiled: rest };
  } catch (e) {
    ajv().removeSchema(rest);
    return { validator: e instanceof Error ? e : new Error(String(e)) };
  }
}

function evictOldest(): void {
  const [digest, entry] = byDigest.entries().next().value as [string, Entry];
  byDigest.delete(digest);
  if (entry.compiled) ajv().removeSchema(entry.compiled);
}

/** How many schemas were compiled so far and how many are kept (for tests and benches). */
export function validatorStats(): { compiles: number; kept: number } {
  return { compiles, kept: byDigest.size };
}

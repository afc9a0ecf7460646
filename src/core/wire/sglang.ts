/**
 * SGLang's native `/generate`: the one endpoint that returns the exact generated token ids (`output_ids`), so
 * token-level checks see special tokens even when `text` was decoded with skip_special_tokens.
 *
 * Bodies: one JSON object (an array for batched prompts: the first is read), or a stream of chunks as SSE
 * (`data: {…}` … `data: [DONE]`) or, in old builds, NUL-delimited JSON. By default each chunk repeats everything
 * generated so far (cumulative); with `--incremental-streaming-output` chunks are deltas. The mode is told apart
 * from the chunks themselves.
 */
import type { ParsedResponse, RawEvent } from '../model';
import {
  DONE,
  arr,
  checkTerminated,
  foldAll,
  newResponse,
  streamFold,
  type StreamFold,
  num,
  obj,
  readError,
  readUsage,
  setError,
  str,
  text,
  type Json,
} from './common';

export function parseSglangJson(value: unknown, events: RawEvent[]): ParsedResponse {
  const res = newResponse('sglang-generate', false, events);
  res.terminated = true;
  const out = obj(Array.isArray(value) ? value[0] : value);
  if (!out) return res;
  const error = readError(out);
  if (error) setError(res, error, 0);
  res.message.content = text(out.text);
  const ids = tokenIds(out.output_ids);
  if (ids) res.outputIds = ids;
  const meta = obj(out.meta_info);
  if (meta) readMeta(res, meta, 0);
  for (const entry of arr(meta?.output_token_logprobs)) {
    // [logprob, token_id, text]; the text is there only with return_text_in_logprobs.
    const token = str(arr(entry)[2]);
    if (token !== undefined) (res.logprobTokens ??= []).push({ token });
  }
  return res;
}

export function parseSglangStream(events: RawEvent[]): ParsedResponse {
  return foldAll(sglangStreamFold(events), events);
}

/** The SGLang /generate stream parser, one event at a time (`events`: the list the response keeps, if any). */
export function sglangStreamFold(events: RawEvent[] = []): StreamFold {
  const res = newResponse('sglang-generate', true, events);
  const text = new Accumulator<string>(
    (soFar, next) => (!next.startsWith(soFar) ? false : next.length > soFar.length ? true : undefined),
    (soFar, next) => soFar + next,
    '',
  );
  const ids = new Accumulator<number[]>(
    (soFar, next) => {
      const extends_ = soFar.every((id, k) => next[k] === id);
      return !extends_ ? false : next.length > soFar.length ? true : undefined;
    },
    (soFar, next) => soFar.concat(next),
    [],
  );
  let sawIds = false;
  return streamFold(
    res,
    (value, i, ev) => {
      if (value === DONE) {
        res.terminated = true;
        return;
      }
      const chunk = obj(Array.isArray(value) ? value[0] : value);
      if (!chunk) return;
      const error = readError(chunk);
      if (error) setError(res, error, i, ev.offset);
      const meta = obj(chunk.meta_info);
      const piece = str(chunk.text);
      if (piece !== undefined) text.add(piece);
      const chunkIds = tokenIds(chunk.output_ids);
      if (chunkIds) {
        sawIds = true;
        // Cumulative ids always number completion_tokens; deltas fall short of it after the first chunk.
        const completion = num(meta?.completion_tokens);
        ids.add(chunkIds, completion === undefined ? undefined : chunkIds.length === completion);
      }
      if (meta) readMeta(res, meta, i, ev.offset);
    },
    () => {
      res.message.content = text.value === '' ? undefined : text.value;
      if (sawIds) res.outputIds = ids.value;
      checkTerminated(res, 'a chunk with a finish_reason (or data: [DONE])');
    },
  );
}

/**
 * Builds the whole output from cumulative or incremental chunks. SGLang versions differ (some send cumulative text
 * with incremental ids), so text and ids are told apart separately: at the first chunk that can tell, the mode is
 * decided and then kept, so a later delta that happens to repeat the output so far cannot flip it.
 */
class Accumulator<T extends string | number[]> {
  private cumulative: boolean | undefined;
  constructor(
    /** true: `next` is the whole output; false: a delta; undefined: cannot tell (`next` repeats the output). */
    private readonly decide: (soFar: T, next: T) => boolean | undefined,
    private readonly concat: (soFar: T, next: T) => T,
    public value: T,
  ) {}

  add(next: T, cumulative?: boolean): void {
    if (this.value.length === 0) {
      this.value = next;
      return;
    }
    this.cumulative ??= cumulative ?? this.decide(this.value, next);
    // Still undecided: the chunk repeats the output so far, which is what either mode keeps.
    if (this.cumulative === undefined) return;
    this.value = this.cumulative ? next : this.concat(this.value, next);
  }
}

function tokenIds(v: unknown): number[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((id): id is number => typeof id === 'number');
}

/** `meta_info`: id, token counts, and the finish reason object. A non-null finish reason ends a stream. */
function readMeta(res: ParsedResponse, meta: Json, eventIndex: number, offset?: number): void {
  res.id ??= text(meta.id);
  const usage = readUsage(meta);
  if (usage) res.usage = usage;
  const finish = meta.finish_reason;
  if (finish === null || finish === undefined) return;
  res.terminated = true;
  const f = obj(finish);
  const type = f ? text(f.type) : text(finish);
  if (type === undefined) return;
  res.nativeFinishReason = type;
  res.finishReason = type;
  const matched = f?.matched;
  if (typeof matched === 'number' || typeof matched === 'string') res.matchedStop = matched;
  else if (Array.isArray(matched)) res.matchedStop = tokenIds(matched);
  // An abort with a message is a server-side refusal (prompt too long, bad input…), not a client cancel.
  const abortMessage = type === 'abort' ? text(f?.message) : undefined;
  if (abortMessage) setError(res, { code: num(f?.status_code) ?? 'abort', message: abortMessage }, eventIndex, offset);
}

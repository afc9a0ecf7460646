/**
 * Engine verdicts: for each truncation or malformation class, what the serving engines users run (vLLM, SGLang,
 * Dynamo) do with it, from their parser code and recorded conformance expectations. One data file per family, each
 * verdict versioned by engine release and cited. This answers: is it the model, the provider's engine, or my agent?
 */
import type { FamilyId } from '../../model';

export type Engine = 'vllm' | 'sglang' | 'dynamo';

export const ENGINE_NAMES: Record<Engine, string> = { vllm: 'vLLM', sglang: 'SGLang', dynamo: 'Dynamo' };

/**
 * What the engine's parser returns:
 * - `recovered`: every complete call is delivered as a structured call;
 * - `partial`: the complete calls before the cut are delivered, the rest is dropped without a trace;
 * - `cut-call-delivered`: a call cut off mid-value is delivered as if complete, with the partial value;
 * - `mixed`: some calls are delivered and markup (or its residue) is left in content;
 * - `dropped`: no call, and the markup is gone (empty content, or the prose before it only);
 * - `content`: no call; the markup goes to content as text;
 * - `unsupported`: that release has no parser for the family (then the whole output is content: the markup reaches
 *   the agent as text, whatever the case);
 * - `unknown`: the sources read do not establish what the parser does with this case (the text says what they do say).
 */
export type Outcome = 'recovered' | 'partial' | 'cut-call-delivered' | 'mixed' | 'dropped' | 'content' | 'unsupported' | 'unknown';

/**
 * The classes, as the conformance suites number them (TOOLCALLING.batch.5.x):
 * - `unclosed-complete`: the calls' bodies are complete, only closing markers are missing (5.a one call, 5.d several);
 * - `unclosed-truncated`: output stopped inside a call's arguments (5.c one call, 5.e the last of several);
 * - `orphan-close`: a call body and its closer without the opening marker (5.b);
 * - `canonical`: the family's healthy form, which the suite files under a missing closer (Mistral writes none).
 *   No rule fires on it; the engines' verdicts are kept because they still differ on it.
 */
export type CaseClass = 'unclosed-complete' | 'unclosed-truncated' | 'orphan-close' | 'canonical';

export interface EngineVerdict {
  outcome: Outcome;
  /** What happens, in a few words the user can check against the engine's output. */
  text: string;
}

export interface VerdictCase {
  /** Conformance case id (`5.a` is TOOLCALLING.batch.5.a). */
  id: string;
  class: CaseClass;
  /** One call, or several with the last one affected. */
  calls: 'single' | 'multi';
  /** The case in words. */
  what: string;
  verdicts: Record<Engine, EngineVerdict>;
}

export interface EngineInfo {
  /** The engine release the verdicts hold for. */
  release: string;
  /** `--tool-call-parser` name (Dynamo: the parser family). */
  parser: string;
  /** The parser's code: repository and path. */
  code: string;
  /** Where the verdicts were read: the recorded expectation or the code, with its commit. */
  evidence: string;
  /** Anything the user should know about how far the verdicts carry. */
  note?: string;
}

export interface FamilyVerdicts {
  family: FamilyId;
  engines: Record<Engine, EngineInfo>;
  cases: VerdictCase[];
}

/** The conformance fixtures most verdicts come from: the recorded behaviour of each engine release on the same inputs. */
export const FIXTURES = {
  repo: 'ai-dynamo/frontend-crates',
  commit: '8d4b1bff82df0e98b94ab7d098af133f4a170109',
  /** `<engine-release>/<family>/TOOLCALLING.batch.5.yaml` under this folder; inputs under `inputs/<family>/`. */
  folder: 'conformance/toolcalling/fixtures-batch-v1',
  releases: { vllm: '0.23.0', sglang: '0.5.12.post1', dynamo: '3.0.0' } as Record<Engine, string>,
};

/** The fixture file of one engine for one conformance family, as a citation. */
export function fixture(engine: Engine, family: string): string {
  const dir =
    engine === 'vllm'
      ? `vllm-${FIXTURES.releases.vllm}`
      : engine === 'sglang'
        ? `sglang-${FIXTURES.releases.sglang}`
        : `dynamo-${FIXTURES.releases.dynamo}`;
  return `${FIXTURES.repo} ${FIXTURES.folder}/${dir}/${family}/TOOLCALLING.batch.5.yaml @ ${FIXTURES.commit.slice(0, 12)}`;
}

/** The verdict of an engine with no parser for the family: the same for every case, and a fact the user needs. */
export function noParser(why: string): EngineVerdict {
  return { outcome: 'unsupported', text: `no parser for this family (${why}): no call, the whole output, markup included, is content` };
}

/** An engine entry for an engine that has no parser for the family; `evidence` is where its absence is recorded. */
export function noParserInfo(release: string, evidence: string): EngineInfo {
  return { release, parser: '(none)', code: `none: ${evidence}`, evidence };
}

/** The conformance cases every family's verdicts carry (5.b, the orphan closer, is optional and written out apart). */
export type UnclosedCaseId = '5.a' | '5.c' | '5.d' | '5.e';

const UNCLOSED: Record<UnclosedCaseId, Pick<VerdictCase, 'class' | 'calls'>> = {
  '5.a': { class: 'unclosed-complete', calls: 'single' },
  '5.c': { class: 'unclosed-truncated', calls: 'single' },
  '5.d': { class: 'unclosed-complete', calls: 'multi' },
  '5.e': { class: 'unclosed-truncated', calls: 'multi' },
};

/** One of the cases in words, with the verdicts of the engines that differ from case to case. */
export interface UnclosedCaseRow<E extends Engine> {
  what: string;
  verdicts: Record<Exclude<Engine, E>, EngineVerdict>;
}

/**
 * The cases 5.a, 5.c, 5.d and 5.e in that order, each with its class and call count; `every` holds the verdicts that
 * are the same in every case (an engine with no parser for the family), `rows` the rest.
 */
export function unclosedCases<E extends Engine>(
  every: Record<E, EngineVerdict>,
  rows: Record<UnclosedCaseId, UnclosedCaseRow<E>>,
): VerdictCase[] {
  return (Object.keys(UNCLOSED) as UnclosedCaseId[]).map((id) => {
    const all = { ...every, ...rows[id].verdicts } as Record<Engine, EngineVerdict>;
    return { id, ...UNCLOSED[id], what: rows[id].what, verdicts: { vllm: all.vllm, sglang: all.sglang, dynamo: all.dynamo } };
  });
}

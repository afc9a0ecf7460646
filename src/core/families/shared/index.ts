/**
 * Shared scanning for the family modules: marker search, truncated-marker detection, balanced-JSON ends,
 * `<think>` blocks, free-text regions, and the builders that collect segments for `render` and `parse`.
 *
 * Conventions every family follows (so checks can treat them alike):
 * - Parsers never throw. Whatever is not in the family's grammar becomes a `FormatProblem`.
 * - `reasoning` and `content` are recovered trimmed of surrounding whitespace; whitespace-only means absent.
 *   Their segments cover the trimmed text, so a segment's slice equals what it names.
 * - Segments nest only as section ⊃ call ⊃ (call-id | call-name | arguments), plus call-id ⊃ call-name
 *   where the name lives inside the id (Kimi `functions.NAME:IDX`). Markup inside a section or call has
 *   no segment of its own; `marker` segments are markers outside sections and calls.
 * - Truncated calls are kept in the recovered message (with what arrived) and flagged, unlike the
 *   SGLang/vLLM parsers that drop them: Tokenscope shows what the model emitted.
 *
 * The code lives in this folder, one job per file: `text.ts` (markers and text primitives), `build.ts` (the
 * parse/render builders), `turn.ts` (the turn/section grammar engine), `xml-args.ts` (XML-style arguments).
 * This module re-exports them so a family imports its whole toolkit from one place. Beside them: `format.ts` (the
 * `ModelFormat` a grammar implements), `verdicts.ts` (the types and citation helpers of the engine verdict data) and
 * `wrapped-json-list.ts` (verdicts shared by the families that wrap a JSON call list in one tag pair).
 */
export * from './text';
export * from './build';
export * from './turn';
export * from './xml-args';
export * from './invoke-xml';
export * from './json-calls';
export * from './placeholders';
export * from './schema-types';

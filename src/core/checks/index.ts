/**
 * The registry of rules, in report order: structure of the native markup, leaks, the calls themselves, the finish
 * reason, the wire, then the request history. Rule ids are stable: users filter on them.
 * A rule's `severity` is the highest it reports; some findings come lower (kimi-call-id: a bare `NAME:IDX` is info,
 * a `call_…` id a warning), so consumers read each finding's own severity.
 */
import type { Severity } from '../model';
import type { Check } from './types';
import sectionUnclosed from './section-unclosed';
import callUnclosed from './call-unclosed';
import markerTruncated from './marker-truncated';
import reasoningUnclosed from './reasoning-unclosed';
import malformedCall from './malformed-call';
import strayMarker from './stray-marker';
import markupResidue from './markup-residue';
import markerPlaceholder from './marker-placeholder';
import markupInContent from './markup-in-content';
import markupInReasoning from './markup-in-reasoning';
import specialTokenInText from './special-token-in-text';
import unknownDialectCall from './unknown-dialect-call';
import markupInToolCall from './markup-in-tool-call';
import argsInvalidJson from './args-invalid-json';
import argsSchema from './args-schema';
import toolUnknown from './tool-unknown';
import kimiCallId from './kimi-call-id';
import providerParseMismatch from './provider-parse-mismatch';
import finishReasonMismatch from './finish-reason-mismatch';
import emptyResponse from './empty-response';
import upstreamError from './upstream-error';
import pinNotHonoured from './pin-not-honoured';
import streamUnterminated from './stream-unterminated';
import wireInvalidJson from './wire-invalid-json';
import wireUnexpectedEvent from './wire-unexpected-event';
import historyKimiIds from './history-kimi-ids';
import historyEchoedMarkers from './history-echoed-markers';
import historyReasoningMissing from './history-reasoning-missing';
import historyToolOrder from './history-tool-order';
import historyToolResultMissing from './history-tool-result-missing';
import promptTokenMismatch from './prompt-token-mismatch';

export const checks: readonly Check[] = [
  sectionUnclosed,
  callUnclosed,
  markerTruncated,
  reasoningUnclosed,
  malformedCall,
  strayMarker,
  markupResidue,
  markerPlaceholder,
  markupInContent,
  markupInReasoning,
  specialTokenInText,
  unknownDialectCall,
  markupInToolCall,
  argsInvalidJson,
  argsSchema,
  toolUnknown,
  kimiCallId,
  providerParseMismatch,
  finishReasonMismatch,
  emptyResponse,
  upstreamError,
  pinNotHonoured,
  streamUnterminated,
  wireInvalidJson,
  wireUnexpectedEvent,
  historyKimiIds,
  historyEchoedMarkers,
  historyReasoningMissing,
  historyToolOrder,
  historyToolResultMissing,
  promptTokenMismatch,
];

/**
 * The rules that judge the request alone (the history the agent sent back), whatever the response: what
 * `lint --request` runs on a bare request body.
 */
export const requestChecks: readonly Check[] = [
  historyKimiIds,
  historyEchoedMarkers,
  historyReasoningMissing,
  historyToolOrder,
  historyToolResultMissing,
];

/** The rules that apply to any exchange, model turn or not (a model list, embeddings, a token count). */
export const exchangeChecks: readonly Check[] = [upstreamError];

/** What a rule is, for lists and hovers. */
export interface RuleInfo {
  id: string;
  severity: Severity;
  title: string;
  why: string;
}

/** Reported in place of a check that threw: the analysis goes on, and the failure is visible, not silent. */
export const INTERNAL_ERROR: RuleInfo = {
  id: 'internal-error',
  severity: 'warning',
  title: 'A check failed',
  why: 'Tokenscope could not finish one of its checks on this input, so the findings may be incomplete.',
};

/** Reported by the analysis of a capture whose body was larger than the store keeps (its per-body cap). */
export const CAPTURE_TRUNCATED: RuleInfo = {
  id: 'capture-truncated',
  severity: 'info',
  title: 'Capture cut at the size cap',
  why: 'Tokenscope kept only the start of a response larger than its per-body cap: the client got every byte, but findings past the cut are missing.',
};

/** Reported by the token accounting (tokens/accounting.ts): the turn's tokens against what the provider billed. */
export const TOKEN_ACCOUNTING_MISMATCH: RuleInfo = {
  id: 'token-accounting-mismatch',
  severity: 'warning',
  title: 'Completion tokens differ from the bill',
  why: "The provider billed a different number of completion tokens than the turn holds in the model's own tokenizer: output was hidden, stripped or invented on the way, so the agent did not get what the model generated (or you pay for tokens you never saw).",
};

const byId = new Map<string, RuleInfo>(
  [...checks, INTERNAL_ERROR, CAPTURE_TRUNCATED, TOKEN_ACCOUNTING_MISMATCH].map((c) => [
    c.id,
    { id: c.id, severity: c.severity, title: c.title, why: c.why },
  ]),
);

export function ruleInfo(id: string): RuleInfo | undefined {
  return byId.get(id);
}

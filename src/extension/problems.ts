/**
 * What the Problems panel lists, without `vscode`: the findings of the newest broken captures (an error finding),
 * whether or not their exchange is open, each placed on its raw-stream document (exchanges.ts turns these records
 * into diagnostics). Bounded: a store of 100,000 captures costs the panel PROBLEM_CAPTURES of them.
 */
import type { ExchangeQuery } from '../core/capture/database';
import type { CapturedExchange, Severity } from '../core/model';
import type { FindingView } from '../../webview/protocol';
import { findingRange, positionAt } from './exchangeView';

/** The most captures whose findings the Problems panel lists without their exchange being open. */
export const PROBLEM_CAPTURES = 200;

/** Has an error finding: something that breaks an agent was found in it. */
export function hasErrorFinding(x: CapturedExchange): boolean {
  return (x.summary?.counts.error ?? 0) > 0;
}

/**
 * The newest `limit` captures with an error finding, newest first. The store's `broken` query also holds exchanges
 * broken without one (cut off, HTTP errors the analysis has not reached): it is read in growing pages until enough.
 */
export function problemCaptures(query: (q: ExchangeQuery) => CapturedExchange[], limit = PROBLEM_CAPTURES): CapturedExchange[] {
  for (let page = limit; ; page *= 4) {
    const broken = query({ broken: true, limit: page });
    const picked = broken.filter(hasErrorFinding);
    if (picked.length >= limit || broken.length < page || page >= limit * 64) return picked.slice(0, limit);
  }
}

export interface ProblemPosition {
  line: number;
  character: number;
}

/** One Problems entry: where in the raw-stream document, what, how bad, and its rule. */
export interface ProblemRecord {
  start: ProblemPosition;
  end: ProblemPosition;
  message: string;
  severity: Severity;
  code: string;
}

type FindingLike = Pick<FindingView, 'rule' | 'severity' | 'message' | 'start' | 'end' | 'expectedAt' | 'expectedMarker'>;

/**
 * Findings placed on the native text they index into (the raw-stream document's content); `repaired`: what repair
 * mode delivered instead, as one note at the start.
 */
export function problemRecords(findings: readonly FindingLike[], text: string, repaired?: string): ProblemRecord[] {
  const out = findings.map((f): ProblemRecord => {
    const r = findingRange(f as FindingView, text.length);
    return {
      start: positionAt(text, r.start),
      end: positionAt(text, r.end),
      message: f.expectedMarker ? `${f.message} (expected ${f.expectedMarker} here)` : f.message,
      severity: f.severity,
      code: f.rule,
    };
  });
  if (repaired) {
    out.push({
      start: { line: 0, character: 0 },
      end: { line: 0, character: 0 },
      message: `Repair mode rewrote this response for the agent: ${repaired}. The findings are on the upstream's bytes.`,
      severity: 'info',
      code: 'repaired',
    });
  }
  return out;
}

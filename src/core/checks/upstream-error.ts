import type { Finding } from '../model';
import type { Check } from './types';
import { at } from './wire-findings';

/**
 * OpenRouter sends generation errors with HTTP 200, in the body or as a mid-stream event (anomalyco/opencode#11541),
 * at the top level or inside the choice it ends with finish_reason "error" (`choices[0].error`). A streamed error is
 * an event at a place in the stream; a JSON body is the upstream's whole answer, named by its HTTP error status (the
 * capture's, else a numeric error code in that range, which is how OpenRouter and SGLang carry it). A choice ended
 * with finish_reason "error" and no error object anywhere is still an error the agent must see.
 */
const check: Check = {
  id: 'upstream-error',
  severity: 'error',
  title: 'Upstream reported an error',
  why: 'Agents mostly show a generic "Provider returned error"; the real upstream message (and which provider sent it) is only on the wire.',
  run: (ctx) => {
    const r = ctx.response;
    if (!r) return [];
    const found = (text: string): Finding => ({ rule: check.id, severity: check.severity, message: text, location: 'wire' });
    const provider = r.provider;
    const choiceEnded = r.finishReason === 'error';
    if (!r.error) {
      if (!choiceEnded) return [];
      const native = r.nativeFinishReason && r.nativeFinishReason !== 'error' ? ` (provider's reason: ${r.nativeFinishReason})` : '';
      return [
        found(
          `The upstream ended the turn with finish_reason error${native}${provider ? ` (provider ${provider})` : ''} and sent no error message: the generation failed, and what arrived before is incomplete.`,
        ),
      ];
    }
    // The provider's text as sent: every reader (lint, show, the extension) escapes and cuts it for display.
    const { code, message } = r.error;
    if (r.streamed) {
      const detail = `${code === undefined ? '' : `${code}: `}${message}`;
      const from = provider ? ` from ${provider}` : '';
      return r.wireIssues
        .filter((w) => w.code === 'error-event')
        .map((w) => found(`The stream carried an error event${from}${at(w)}: ${detail}`));
    }
    const failed = (s: unknown): s is number => typeof s === 'number' && s >= 400 && s <= 599;
    const status = r.status === undefined ? (failed(code) ? code : undefined) : failed(r.status) ? r.status : undefined;
    const shown = code === undefined || code === status ? message : `${code}: ${message}`;
    const by = provider ? ` (provider ${provider})` : '';
    if (choiceEnded && (r.status === undefined || !failed(r.status))) {
      // The error sits in the choice of an answer that otherwise looks like a turn: OpenRouter's generation failure.
      const numbered = code === undefined ? message : `${code}: ${message}`;
      return [found(`The upstream ended the turn with finish_reason error: ${numbered}${by}`)];
    }
    // OpenRouter also answers HTTP 200 with an error body.
    const answered =
      status !== undefined ? `HTTP ${status}` : r.status !== undefined ? `HTTP ${r.status} with an error body` : 'with an error';
    return [found(`The upstream answered ${answered}: ${shown}${by}`)];
  },
};

export default check;

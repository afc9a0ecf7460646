import type { Finding } from '../model';
import type { Check } from './types';
import { at } from './wire-findings';

/**
 * OpenRouter sends generation errors with HTTP 200, in the body or as a mid-stream event (anomalyco/opencode#11541).
 * A streamed error is an event at a place in the stream; a JSON body is the upstream's whole answer, named by its
 * HTTP error status (the capture's, else a numeric error code in that range, which is how OpenRouter and SGLang
 * carry it).
 */
const check: Check = {
  id: 'upstream-error',
  severity: 'error',
  title: 'Upstream reported an error',
  why: 'Agents mostly show a generic "Provider returned error"; the real upstream message (and which provider sent it) is only on the wire.',
  run: (ctx) => {
    const r = ctx.response;
    if (!r?.error) return [];
    const { code, message } = r.error;
    const found = (text: string): Finding => ({ rule: check.id, severity: check.severity, message: text, location: 'wire' });
    if (r.streamed) {
      const detail = `${code === undefined ? '' : `${code}: `}${message}`;
      const from = r.provider ? ` from ${r.provider}` : '';
      return r.wireIssues.filter((w) => w.code === 'error-event').map((w) => found(`The stream carried an error event${from}${at(w)}: ${detail}`));
    }
    const failed = (s: unknown): s is number => typeof s === 'number' && s >= 400 && s <= 599;
    const status = r.status === undefined ? (failed(code) ? code : undefined) : failed(r.status) ? r.status : undefined;
    const shown = code === undefined || code === status ? message : `${code}: ${message}`;
    const provider = r.provider ? ` (provider ${r.provider})` : '';
    // OpenRouter also answers HTTP 200 with an error body.
    const answered = status !== undefined ? `HTTP ${status}` : r.status !== undefined ? `HTTP ${r.status} with an error body` : 'with an error';
    return [found(`The upstream answered ${answered}: ${shown}${provider}`)];
  },
};

export default check;

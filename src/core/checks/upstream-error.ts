import type { Finding } from '../model';
import type { Check } from './types';
import { at } from './wire-findings';

/** OpenRouter sends generation errors with HTTP 200, in the body or as a mid-stream event (anomalyco/opencode#11541). */
const check: Check = {
  id: 'upstream-error',
  severity: 'error',
  title: 'Upstream reported an error',
  why: 'Agents mostly show a generic "Provider returned error"; the real upstream message (and which provider sent it) is only on the wire.',
  run: (ctx) => {
    const r = ctx.response;
    if (!r) return [];
    const detail = r.error ? `${r.error.code === undefined ? '' : `${r.error.code}: `}${r.error.message}` : '';
    const from = r.provider ? ` from ${r.provider}` : '';
    const events = r.wireIssues.filter((w) => w.code === 'error-event');
    const found = (message: string): Finding => ({ rule: check.id, severity: check.severity, message, location: 'wire' });
    if (events.length > 0) {
      return events.map((w) => found(`The stream carried an error event${from}${at(w)}: ${detail || w.message}`));
    }
    return r.error ? [found(`The upstream answered with an error${from}: ${detail}`)] : [];
  },
};

export default check;

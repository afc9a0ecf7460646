/**
 * The command-line side of OpenTelemetry export, shared by `serve` and `export-otlp`: the flags, and a one-line
 * report of what was sent and dropped.
 */
import { parseRedactPattern } from '../core/export/redaction';
import { OtlpExporter, type OtlpStats } from '../core/export/otlp';
import { describeOtlp, readOtlpConfig } from '../core/export/otlp-config';
import { plural } from '../core/tokens/accounting';
import type { Args } from './args';
import type { CliIO } from './io';
import { VERSION } from '../core/version';

export const OTLP_VALUES = ['otlp-endpoint', 'otlp-protocol'];
export const OTLP_BOOLEANS = ['otlp-content'];

export const OTLP_HELP = `OpenTelemetry: --otlp-endpoint URL (default OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, or
http://localhost:4318), --otlp-protocol http/protobuf|http/json (default OTEL_EXPORTER_OTLP_PROTOCOL, or
http/protobuf); headers from OTEL_EXPORTER_OTLP_HEADERS; service name OTEL_SERVICE_NAME (default tokenscope).
--otlp-content also sends the (redacted) messages as gen_ai.input.messages / gen_ai.output.messages.`;

export function otlpFromArgs(args: Args, io: CliIO): OtlpExporter {
  const config = readOtlpConfig({
    endpoint: args.str('otlp-endpoint'),
    protocol: args.str('otlp-protocol'),
    content: args.bool('otlp-content'),
  });
  const patterns = args.list('redact').map(parseRedactPattern);
  return new OtlpExporter(config, {
    version: VERSION,
    onWarning: (m) => io.err(`tokenscope: ${m}`),
    redactPatterns: patterns.length ? patterns : undefined,
  });
}

export function otlpTarget(e: OtlpExporter): string {
  return describeOtlp(e.config);
}

export function otlpReport(s: OtlpStats): string {
  const parts = [`${plural(s.exported, 'span')} sent`];
  if (s.dropped) parts.push(`${s.dropped} dropped${s.lastError ? ` (${s.lastError})` : ''}`);
  if (s.pending) parts.push(`${s.pending} unanswered`);
  if (s.skipped) parts.push(`${s.skipped} skipped (no inference call)`);
  return parts.join(', ');
}

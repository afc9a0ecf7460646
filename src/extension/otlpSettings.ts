/**
 * OpenTelemetry export as VS Code configures it, without `vscode` (tests drive it directly): the `tokenscope.otlp.*`
 * settings and the headers kept in SecretStorage become the exporter's config, the `OTEL_EXPORTER_OTLP_*`
 * environment filling in what a setting leaves empty; an exporter then follows the capture store. otlpExport.ts
 * reads the settings and secrets and shows errors.
 */
import { OtlpExporter, type ObservableStore, type OtlpStats } from '../core/export/otlp';
import { describeOtlp, parseOtlpHeaders, readOtlpConfig, type OtlpConfig } from '../core/export/otlp-config';
import type { RedactOptions } from '../core/redact';

/** SecretStorage name of the headers, in `OTEL_EXPORTER_OTLP_HEADERS` syntax (`Authorization=Basic …,x-a=b`). */
export const SECRET_HEADERS = 'OTEL_EXPORTER_OTLP_HEADERS';

/** The `tokenscope.otlp.*` settings. */
export interface OtlpSettings {
  enabled?: boolean;
  endpoint?: string;
  protocol?: string;
  serviceName?: string;
  content?: boolean;
}

export interface SecretReader {
  get(key: string): PromiseLike<string | undefined>;
}

/** The exporter config of these settings and stored headers; undefined when export is off. A bad value throws a one-line UserError. */
export async function exporterConfig(
  s: OtlpSettings,
  secrets: SecretReader,
  env: Record<string, string | undefined> = process.env,
): Promise<OtlpConfig | undefined> {
  if (!s.enabled) return undefined;
  const secret = await secrets.get(SECRET_HEADERS);
  return readOtlpConfig(
    {
      endpoint: s.endpoint || undefined,
      protocol: s.protocol || undefined,
      serviceName: s.serviceName || undefined,
      content: s.content ?? false,
      headers: secret ? parseOtlpHeaders(secret, 'the stored OpenTelemetry headers') : undefined,
    },
    env,
  );
}

/** Why a typed headers value is refused (undefined: accepted). The message never repeats the value. */
export function headersInputError(value: string): string | undefined {
  try {
    parseOtlpHeaders(value);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

export interface RunningExport {
  /** One line for the log: where spans go, header names without values. */
  description: string;
  exporter: OtlpExporter;
  /** Detaches from the store, sends what is queued, and returns the counts. */
  stop(): Promise<OtlpStats>;
}

/** Starts exporting `store`'s exchanges as they finish, when the settings ask for it. */
export async function startOtlpExport(
  s: OtlpSettings,
  secrets: SecretReader,
  store: ObservableStore,
  opts: {
    version: string;
    redactPatterns?: RedactOptions['patterns'];
    onWarning?: (m: string) => void;
    env?: Record<string, string | undefined>;
  },
): Promise<RunningExport | undefined> {
  const config = await exporterConfig(s, secrets, opts.env);
  if (!config) return undefined;
  const exporter = new OtlpExporter(config, { version: opts.version, redactPatterns: opts.redactPatterns, onWarning: opts.onWarning });
  const detach = exporter.attach(store);
  return {
    description: describeOtlp(config),
    exporter,
    stop: async () => {
      detach();
      await exporter.shutdown();
      return exporter.stats();
    },
  };
}

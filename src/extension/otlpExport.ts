/**
 * OpenTelemetry export from VS Code: the `tokenscope.otlp.*` settings, headers (a Langfuse or Phoenix key) kept in
 * SecretStorage, and one exporter listening to the capture store (src/core/export/otlp.ts). The environment
 * (`OTEL_EXPORTER_OTLP_*`) still applies where a setting is empty.
 */
import * as vscode from 'vscode';
import type { ObservableStore } from '../core/export/otlp';
import type { RedactOptions } from '../core/redact';
import { affectsSetting, Command, openSettings, readSetting, registerCommand, type SettingKey } from './contributions';
import { headersInputError, SECRET_HEADERS, startOtlpExport, type OtlpSettings, type RunningExport } from './otlpSettings';

export class OtlpBridge implements vscode.Disposable {
  private running: RunningExport | undefined;
  private store: ObservableStore | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly patterns: () => RedactOptions['patterns'],
  ) {
    context.subscriptions.push(
      registerCommand(vscode.commands, Command.SetOtlpHeaders, () => this.setHeaders()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSetting(e, 'otlp', 'redaction')) void this.restart();
      }),
    );
  }

  /** Starts exporting the exchanges of `store` as they finish (when `tokenscope.otlp.enabled`); call again on a new store. */
  async attach(store: ObservableStore | undefined): Promise<void> {
    this.store = store;
    await this.restart();
  }

  private async restart(): Promise<void> {
    await this.stop();
    if (!this.store) return;
    const get = <K extends SettingKey>(key: K) => readSetting(vscode.workspace, key);
    const settings: OtlpSettings = {
      enabled: get('otlp.enabled'),
      endpoint: get('otlp.endpoint'),
      protocol: get('otlp.protocol'),
      serviceName: get('otlp.serviceName'),
      content: get('otlp.content'),
    };
    try {
      const version = String(this.context.extension.packageJSON.version ?? '0.1.0');
      this.running = await startOtlpExport(settings, this.context.secrets, this.store, {
        version,
        redactPatterns: this.patterns(),
        onWarning: (m) => this.log.warn(m),
      });
      if (this.running) this.log.info(`OpenTelemetry export to ${this.running.description}`);
    } catch (e) {
      const msg = (e as Error).message.split('\n')[0];
      this.log.error(`OpenTelemetry export is off: ${msg}`);
      void vscode.window.showErrorMessage(`Tokenscope: OpenTelemetry export is off: ${msg}`, 'Open Settings').then((a) => {
        if (a) void openSettings(vscode.commands, 'otlp');
      });
    }
  }

  private async stop(): Promise<void> {
    const r = this.running;
    this.running = undefined;
    if (!r) return;
    const s = await r.stop();
    this.log.info(`OpenTelemetry export stopped: ${s.exported} spans sent, ${s.dropped} dropped`);
  }

  private async setHeaders(): Promise<void> {
    const value = await vscode.window.showInputBox({
      title: 'OpenTelemetry export headers',
      prompt:
        'key=value pairs separated by commas, values URL-encoded (Langfuse: Authorization=Basic%20<base64 of pk:sk>). Kept in secret storage. Empty removes them.',
      password: true,
      ignoreFocusOut: true,
      validateInput: headersInputError,
    });
    if (value === undefined) return;
    if (value.trim()) await this.context.secrets.store(SECRET_HEADERS, value.trim());
    else await this.context.secrets.delete(SECRET_HEADERS);
    void vscode.window.showInformationMessage(
      value.trim() ? 'Tokenscope: OpenTelemetry headers stored.' : 'Tokenscope: OpenTelemetry headers removed.',
    );
    await this.restart();
  }

  dispose(): void {
    void this.stop();
  }
}

/**
 * The extension's settings, read into plain values. Pure (no `vscode` import): extension.ts passes the typed getter of
 * ./contributions.ts (`settingReader`), tests pass a plain object's.
 */
import { isAbsolute, resolve } from 'node:path';
import { checkUpstreamUrl, type Upstreams } from '../core/proxy/routes';
import { DEFAULT_TIMEOUTS, type ProxyOptions, type ProxyTimeouts } from '../core/proxy/server';
import { DEFAULT_UPSTREAM_CONNECTIONS, MAX_UPSTREAM_CONNECTIONS } from '../core/proxy/slots';
import { settingId, type SettingGet } from './contributions';

export interface Settings {
  port: number;
  autostart: boolean;
  upstreams: Upstreams;
  /** The proxy's timeouts (tokenscope.proxy.*Timeout, seconds in the settings). */
  timeouts: Required<ProxyTimeouts>;
  /** Exchanges in flight to one upstream at most (tokenscope.proxy.upstreamConnections). */
  upstreamConnections: number;
  /** Set when a configured upstream URL is unusable: one line per bad entry (the entry is ignored). */
  upstreamProblems: string[];
  tokenizerFolder?: string;
  captureFolder?: string;
  retentionDays: number;
  /** The most decoded bytes kept per captured body. */
  maxBodyBytes: number;
  /** In the shape src/core/redact.ts takes. */
  redactionPatterns: { label: string; pattern: RegExp }[];
  /** Patterns that did not compile, one line each. */
  redactionProblems: string[];
}

const NAMED_ROUTES = new Set(['openrouter', 'sglang', 'anthropic', 'openai', 'default']);

/** `folder` settings may be relative: to the first workspace folder, as VS Code users expect. */
function folder(value: string | undefined, base: string | undefined): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  return isAbsolute(v) || !base ? v : resolve(base, v);
}

export function readSettings(get: SettingGet, workspaceFolder?: string): Settings {
  const upstreamProblems: string[] = [];
  const upstreams: Upstreams = {};
  const entries: [string, unknown][] = Object.entries(get('upstreams') ?? {});
  const sglang = get('sglang.url')?.trim();
  if (sglang) entries.push(['sglang', sglang]);
  for (const [name, url] of entries) {
    if (typeof url !== 'string') {
      upstreamProblems.push(`${settingId('upstreams')}.${name} must be a URL string`);
      continue;
    }
    try {
      const checked = checkUpstreamUrl(url, `upstream "${name}"`);
      if (NAMED_ROUTES.has(name)) (upstreams as Record<string, string>)[name] = checked;
      else (upstreams.custom ??= {})[name] = checked;
    } catch (e) {
      upstreamProblems.push((e as Error).message);
    }
  }
  const redactionProblems: string[] = [];
  const redactionPatterns: Settings['redactionPatterns'] = [];
  for (const [i, p] of ((get('redaction.patterns') ?? []) as unknown[]).entries()) {
    try {
      redactionPatterns.push({ label: `setting-${i + 1}`, pattern: new RegExp(String(p), 'g') });
    } catch (e) {
      redactionProblems.push(`redaction pattern ${JSON.stringify(p)} is not a valid regular expression: ${(e as Error).message}`);
    }
  }
  const port = get('proxy.port');
  /** A timeout setting in seconds, as ms; the default when unset or not a positive number. */
  const seconds = (key: 'proxy.upstreamTimeout' | 'proxy.idleTimeout' | 'proxy.headerTimeout', fallbackMs: number) => {
    const v = get(key);
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v * 1000) : fallbackMs;
  };
  return {
    port: Number.isInteger(port) && port! >= 0 && port! <= 65535 ? port! : 8719,
    autostart: get('proxy.autostart') ?? true,
    upstreams,
    timeouts: {
      upstreamHeadersMs: seconds('proxy.upstreamTimeout', DEFAULT_TIMEOUTS.upstreamHeadersMs),
      idleMs: seconds('proxy.idleTimeout', DEFAULT_TIMEOUTS.idleMs),
      clientHeadersMs: seconds('proxy.headerTimeout', DEFAULT_TIMEOUTS.clientHeadersMs),
    },
    upstreamConnections: connections(get('proxy.upstreamConnections')),
    upstreamProblems,
    tokenizerFolder: folder(get('tokenizer.folder'), workspaceFolder),
    captureFolder: folder(get('capture.folder'), workspaceFolder),
    retentionDays: Math.max(0, get('capture.retentionDays') ?? 14),
    maxBodyBytes: Math.max(1, get('capture.maxBodyMB') ?? 64) * 1024 * 1024,
    redactionPatterns,
    redactionProblems,
  };
}

/** A connection limit setting: a whole number in range, else the default. */
function connections(v: number | undefined): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_UPSTREAM_CONNECTIONS ? v : DEFAULT_UPSTREAM_CONNECTIONS;
}

/** What the settings decide of the proxy the extension starts (the rest of its options are the extension's own). */
export function proxySettings(
  s: Settings,
): Pick<ProxyOptions, 'port' | 'upstreams' | 'timeouts' | 'upstreamConnections' | 'maxRequestBodyBytes' | 'maxDecodedBytes'> {
  return {
    port: s.port,
    upstreams: s.upstreams,
    timeouts: s.timeouts,
    upstreamConnections: s.upstreamConnections,
    maxRequestBodyBytes: s.maxBodyBytes,
    maxDecodedBytes: s.maxBodyBytes,
  };
}

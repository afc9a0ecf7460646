/**
 * Repair mode and provider policy settings, read into plain values (no `vscode` import: tests pass a plain getter).
 * Read per exchange by the proxy's stages, so a change applies to the next request without a restart.
 */
import { checkPolicies, type Policies } from '../core/policy/policy';
import { DEFAULT_REPAIR, type RepairSettings } from '../core/repair/stage';
import { settingId, type SettingGet } from './contributions';

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s.trim() !== '').map((s) => s.trim()) : [];

export function readRepairSettings(get: SettingGet): RepairSettings {
  const truncated = get('repair.truncated');
  return {
    enabled: get('repair.enabled') === true,
    truncated: truncated === 'passthrough' ? 'passthrough' : DEFAULT_REPAIR.truncated,
    routes: strings(get('repair.routes')),
    models: strings(get('repair.models')),
  };
}

/** The policies, or none and a one-line problem when the setting is malformed (nothing is applied then). */
export function readPolicies(get: SettingGet): { policies: Policies; problem?: string } {
  try {
    return { policies: checkPolicies(get('providerPolicy') ?? {}, settingId('providerPolicy')) };
  } catch (e) {
    return { policies: {}, problem: (e as Error).message };
  }
}

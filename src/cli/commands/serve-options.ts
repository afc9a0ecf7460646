/** `serve` options beyond the routes: repair mode. */
import { UserError } from '../../core/model';
import { DEFAULT_REPAIR, type RepairSettings } from '../../core/repair/stage';
import type { Args } from '../args';

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function repairFromFlags(args: Args): RepairSettings {
  const truncated = args.str('repair-truncated') ?? DEFAULT_REPAIR.truncated;
  if (truncated !== 'withhold' && truncated !== 'passthrough')
    throw new UserError(`--repair-truncated must be withhold or passthrough, got "${truncated}"`);
  const scoped =
    args.str('repair-truncated') !== undefined || args.str('repair-routes') !== undefined || args.str('repair-models') !== undefined;
  if (scoped && !args.bool('repair')) throw new UserError('--repair-truncated, --repair-routes and --repair-models need --repair');
  return { enabled: args.bool('repair'), truncated, routes: list(args.str('repair-routes')), models: list(args.str('repair-models')) };
}

import { formats } from '../core/families/index';
import { loadInput, loadRequest, type LoadedInput } from './input';
import { UserError, type FamilyId, type NormalizedRequest } from '../core/model';
import type { Args } from './args';

/** What `lint` and `tokens` analyse: the one FILE (or capture id), its request, and the forced family. */
export interface TurnInput {
  input: LoadedInput;
  /** `--request FILE` when given, else the request FILE carries (a capture, a bundle). */
  request?: NormalizedRequest;
  family?: FamilyId;
}

/**
 * Reads the turn named by a command's positional FILE and its `--request` / `--family` flags. `storedResult`: a
 * capture id comes with the store's analysis of it (`input.stored`).
 */
export async function loadTurnInput(args: Args, dataDir: string | undefined, storedResult = false): Promise<TurnInput> {
  if (args.positional.length !== 1) {
    throw new UserError(args.positional.length === 0 ? 'needs a FILE (see --help)' : `takes one FILE, got ${args.positional.length}`);
  }
  const family = familyFlag(args.str('family'));
  const input = await loadInput(args.positional[0], { dataDir, storedResult });
  const requestFile = args.str('request');
  return { input, request: requestFile ? loadRequest(requestFile) : input.request, family };
}

function familyFlag(value: string | undefined): FamilyId | undefined {
  if (value === undefined) return undefined;
  const known = formats.find((f) => f.id === value);
  if (!known) throw new UserError(`--family must be one of ${formats.map((f) => f.id).join(', ')}; got "${value}"`);
  return known.id;
}

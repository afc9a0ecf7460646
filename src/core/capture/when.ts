/** Times users type for `captures --since/--until`: a duration back from now (`90s`, `15m`, `1h`, `2d`, `1w`) or a date. */
import { UserError } from '../model';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Epoch ms for `text`: `1h` is an hour before `now`; anything else is parsed as a date (`2026-12-01`, ISO 8601). */
export function parseWhen(text: string, flag: string, now = Date.now()): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(text.trim());
  if (m) return now - Number(m[1]) * UNIT_MS[m[2].toLowerCase()];
  const t = Date.parse(text);
  if (Number.isNaN(t))
    throw new UserError(`${flag} expects a duration (30m, 1h, 2d) or a date (2026-12-01, 2026-12-01T10:00), got "${text}"`);
  return t;
}

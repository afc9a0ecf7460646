/** Source guards: which files under src/ match a pattern (one owner of a judgement, one caller of a function). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './shared';

export const SRC = join(repoRoot, 'src');

/** The .ts files under src/ (paths relative to it) whose text matches `pattern`, leaving out `allowed`. */
export function sourceMatches(pattern: RegExp, allowed: (f: string) => boolean): string[] {
  return readdirSync(SRC, { recursive: true })
    .map(String)
    .filter((f) => /\.tsx?$/.test(f) && !allowed(f))
    .filter((f) => pattern.test(readFileSync(join(SRC, f), 'utf8')));
}

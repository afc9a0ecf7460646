/**
 * Progress of long work (`compare`, `verify`) on stderr: one line rewritten in place, with the rate and an ETA, and
 * only on a terminal (`CliIO.progress` is unset when stderr is piped, so nothing is printed there). Lines a command
 * wants kept (a sample's outcome) go above it.
 */
import type { CliIO } from './io';

export interface Progress {
  /** `done` of `total` finished (`failed` of them failed); redrawn at most every 250 ms, and always at the end. */
  update(done: number, total: number, failed: number): void;
  /** A line that stays, printed above the progress line. */
  note(line: string): void;
  /** Removes the progress line (before the command's report). */
  clear(): void;
}

const NONE: Progress = { update: () => undefined, note: () => undefined, clear: () => undefined };

/**
 * One line rewritten in place on stderr, only on a terminal (nothing when piped): `draw` replaces it, `note` prints a
 * line that stays above it, `clear` removes it. `on` says whether anything is shown at all.
 */
export function statusLine(io: CliIO): { on: boolean; draw(line: string | undefined): void; note(line: string): void; clear(): void } {
  const show = io.progress;
  let shown: string | undefined;
  const draw = (line: string | undefined) => {
    show?.(line);
    shown = line;
  };
  return {
    on: show !== undefined,
    draw,
    note(line) {
      const again = shown;
      if (again !== undefined) show?.(undefined);
      io.err(line);
      if (again !== undefined) show?.(again);
    },
    clear() {
      if (shown !== undefined) draw(undefined);
    },
  };
}

export function progressOf(io: CliIO, what: string, now: () => number = () => performance.now()): Progress {
  const line = statusLine(io);
  if (!line.on) return NONE;
  const start = now();
  let last = -Infinity;
  return {
    update(done, total, failed) {
      const t = now();
      if (t - last < 250 && done < total) return;
      last = t;
      const s = (t - start) / 1000;
      const rate = s > 0 ? done / s : 0;
      const eta = done > 0 && done < total ? ((total - done) / done) * s : undefined;
      line.draw(
        `${what}: ${done}/${total} done${failed ? `, ${failed} failed` : ''}, ${rate < 10 ? rate.toFixed(1) : Math.round(rate)}/s${eta === undefined ? '' : `, ETA ${clock(eta)}`}`,
      );
    },
    note: line.note,
    clear: line.clear,
  };
}

/** `42s`, `3m05s`, `2h10m`. */
export function clock(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round(seconds % 60);
  if (h) return `${h}h${String(m).padStart(2, '0')}m`;
  return m ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

/**
 * Time figures for tests that must hold on a shared, loaded machine (CI runs on 2 busy cores).
 *
 * A wall-clock gap on a loaded machine also holds the time the OS kept this thread off a core while other processes
 * ran. Linux counts that time per thread (/proc/thread-self/schedstat: ns on a core, ns waiting for one), so a test
 * can take it out and keep everything else: the product's own work, and any time it blocks (I/O, a sync call).
 * On a quiet machine the wait is ~0 and these figures are the wall clock's. Where schedstat is missing (not Linux)
 * they fall back to the wall clock and the process's CPU time, and `timingSource` says so.
 */
import { readFileSync } from 'node:fs';

function schedstat(): [number, number] | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
    return [Number(run) / 1e6, Number(wait) / 1e6];
  } catch {
    return undefined;
  }
}

const HAS_SCHEDSTAT = schedstat() !== undefined;

/** How the figures below are measured, for a diagnostic line. */
export const timingSource = HAS_SCHEDSTAT
  ? 'wall clock minus the time the OS kept this thread waiting for a core'
  : 'wall clock (no per-thread scheduler figures here)';

/** ms this thread has waited for a core since it started (0 where the figure is missing). */
export function runQueueWaitMs(): number {
  return schedstat()?.[1] ?? 0;
}

/**
 * CPU time of this thread in ms. Without schedstat, the process's (which also counts worker and GC threads, so it is
 * never lower).
 */
export function threadCpuMs(): number {
  const s = schedstat();
  if (s) return s[0];
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU time of the whole process (all its threads) in ms. */
export function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * A clock that stands still while this thread waits for a core: wall time minus run-queue wait. Gaps measured with
 * it hold what this thread did or blocked on, not what other processes did meanwhile.
 */
export function scheduledNow(): number {
  const s = schedstat();
  return performance.now() - (s ? s[1] : 0);
}

/** Runs `fn` and returns its result with the CPU ms this thread spent in it. */
export function timeCpu<T>(fn: () => T): { value: T; cpuMs: number } {
  const c0 = threadCpuMs();
  const value = fn();
  return { value, cpuMs: threadCpuMs() - c0 };
}

// CPU time per thread of this process, from /proc/self/task (Linux): the main thread, V8's helper threads (created
// with the process: TurboFan's concurrent compiler, the parallel and concurrent GC) and threads started later
// (worker threads, each running one isolate's JavaScript). Empty where /proc is not there.
import { readFileSync, readdirSync } from 'node:fs';

export type ThreadTimes = Map<string, number>;

const TICK_MS = 10; // USER_HZ = 100 on Linux

export function threadTimes(): ThreadTimes {
  const out: ThreadTimes = new Map();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(f[11]) + Number(f[12])) * TICK_MS);
    } catch {
      // the thread has just ended
    }
  }
  return out;
}

/** CPU ms between two snapshots: main thread, threads that already ran at `before0` (V8's helpers), later threads. */
export function splitTimes(before0: ThreadTimes, from: ThreadTimes, to: ThreadTimes) {
  const main = String(process.pid);
  let mainMs = 0;
  let helpersMs = 0;
  let laterMs = 0;
  for (const [tid, ms] of to) {
    const d = ms - (from.get(tid) ?? 0);
    if (tid === main) mainMs += d;
    else if (before0.has(tid)) helpersMs += d;
    else laterMs += d;
  }
  return { mainMs, helpersMs, laterMs };
}

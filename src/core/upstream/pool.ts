/**
 * Runs jobs with at most `concurrency` in flight, in order. Once `signal` aborts, no further job starts (those in
 * flight see the same signal and end themselves). Resolves when every started job has finished.
 */
export async function runPool<J>(
  jobs: readonly J[],
  concurrency: number,
  run: (job: J) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length && !signal?.aborted) await run(jobs[next++]);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, jobs.length)) }, worker));
}

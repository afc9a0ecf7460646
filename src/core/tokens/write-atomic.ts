import { mkdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Writes through a temporary file and a rename, so readers never see half a file; private like the rest of the data
 * dir. The temporary name holds the writer's pid and a random part (worker threads of one process share the pid).
 */
export function writeFileAtomic(file: string, data: Uint8Array | string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing was written
    }
    throw e;
  }
}

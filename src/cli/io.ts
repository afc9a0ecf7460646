import { readFileSync } from 'node:fs';
import { UserError } from '../core/model';

/** Where a command writes. Tests pass their own to capture output. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
}

export const processIO: CliIO = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n'),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n'),
};

/**
 * A signal Ctrl-C aborts, for the long batches (`compare`, `verify`): they stop sending, and report what finished
 * instead of dying mid-run. `release` gives SIGINT back to Node's default once the batch is over.
 */
export function interruptSignal(): { signal: AbortSignal; release(): void } {
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  return { signal: ac.signal, release: () => process.removeListener('SIGINT', onSigint) };
}

/** A CLI command. Returns the exit code. */
export type Command = (argv: string[], io: CliIO) => Promise<number>;

/**
 * A file the user named, as UTF-8 text. Failures are one-line UserErrors about that path ("no such file", "it is a
 * directory", "permission denied"), never Node's errno text.
 */
export function readTextFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (code ?? (e as Error).message.split('\n')[0]);
    throw new UserError(`cannot read ${path}: ${why}`);
  }
}

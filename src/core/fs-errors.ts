/**
 * A file-system failure in a few plain words about the user's path, never errno text (`ENOTDIR`, `EISDIR`): every
 * "cannot read X: …" and "cannot write X: …" that Tokenscope prints ends with one of these.
 */
/** Why reading or writing a file failed: "no such file", "it is a directory", "a folder on its path is a file"… */
export function fsWhy(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a folder on its path is a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOSPC':
      return 'the disk is full';
    case 'EROFS':
      return 'the file system is read-only';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    case 'ELOOP':
      return 'too many symbolic links on its path';
  }
  // Node's own message without its `CODE: ` prefix and the syscall tail (`, open '/x'`).
  const msg = String(err?.message ?? e)
    .split('\n')[0]
    .replace(/^[A-Z]+: /, '')
    .replace(/, \w+ '[^']*'$/, '');
  return msg || 'it cannot be used';
}

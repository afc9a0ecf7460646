/**
 * Tokenizers on this machine without a download: the ones shipped with Tokenscope (its `tokenizers/` folder, beside
 * `dist/` in the VSIX and in a checkout), and the error for a tokenizer that is not here yet. Light on purpose (no
 * tokenizer code): the extension host imports it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { families } from '../families/index';
import { UserError } from '../model';

/**
 * The shipped tokenizers: folder name under `tokenizers/` → the Hub repos whose tokenizer it is (as `tokenizerRepo`
 * spells them), as each family's tokenizer facts give them. Each folder holds the files and their licence
 * (`tokenizers/<name>/LICENSE`, `README.md`).
 */
export const BUNDLED_TOKENIZERS: readonly { dir: string; repos: readonly string[] }[] = families.flatMap((f) =>
  f.tokenizer.bundled ? [f.tokenizer.bundled] : [],
);

/**
 * The folder holding the shipped tokenizers: `tokenizers/` beside `dist/` (this code bundled into `dist/*.js`) or at
 * the repository root (run from `src/core/tokens/`). Undefined when neither exists (a bundle copied elsewhere).
 */
export function defaultBundledRoot(): string | undefined {
  return [join(__dirname, '..', 'tokenizers'), join(__dirname, '..', '..', '..', 'tokenizers')].find((d) =>
    existsSync(join(d, BUNDLED_TOKENIZERS[0].dir)),
  );
}

/**
 * The shipped folder for a Hub repo, when Tokenscope ships its tokenizer and the files are there. `root`: the folder
 * of the shipped tokenizers (default `defaultBundledRoot()`); `false` leaves them out.
 */
export function bundledTokenizerDir(repo: string, root?: string | false): string | undefined {
  if (root === false) return undefined;
  const lower = repo.toLowerCase();
  const entry = BUNDLED_TOKENIZERS.find((b) => b.repos.some((r) => r.toLowerCase() === lower));
  const base = root ?? defaultBundledRoot();
  if (!entry || !base) return undefined;
  const dir = join(base, entry.dir);
  return existsSync(join(dir, 'tiktoken.model')) || existsSync(join(dir, 'tokenizer.json')) ? dir : undefined;
}

/** Which layout a tokenizer folder holds, without loading it; a UserError when it holds none (cheap: for up-front checks). */
export function checkTokenizerDir(dir: string): 'tiktoken' | 'tokenizer.json' {
  if (!existsSync(dir)) throw new UserError(`tokenizer folder ${dir} does not exist`);
  if (existsSync(join(dir, 'tiktoken.model'))) return 'tiktoken';
  if (existsSync(join(dir, 'tokenizer.json'))) return 'tokenizer.json';
  throw new UserError(`${dir} holds neither tiktoken.model nor tokenizer.json`);
}

/**
 * No tokenizer for `repo` on this machine, and the caller asked for no download: the one-line message says where
 * Tokenscope looked; `repo` and `dir` let a UI offer the download (into `dir`) or a folder instead.
 */
export class TokenizerMissingError extends UserError {
  constructor(
    message: string,
    readonly repo: string,
    readonly dir: string,
  ) {
    super(message);
    this.name = 'TokenizerMissingError';
  }
}

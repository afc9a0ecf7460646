import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, type FamilyId } from '../model';
import { getFamily } from '../families/index';
import { loadHfTokenizer } from './hf';
import { downloadHubFile, type HubOptions } from './hub';
import { loadKimiTokenizer } from './kimi';
import { bundledTokenizerDir, checkTokenizerDir, TokenizerMissingError } from './local';
import type { Tokenizer } from './types';

/**
 * Where a model's tokenizer comes from: a local folder the user names, else the copy shipped with Tokenscope (Kimi K2:
 * ./local.ts), else the data dir's download cache, else the Hugging Face Hub (downloaded once into that cache).
 */

/** Model ids as agents and routers spell them → the Hugging Face repo that holds the tokenizer. First match wins. */
const TOKENIZER_REPOS: readonly [RegExp, string][] = [
  [/kimi-k2\.6/, 'moonshotai/Kimi-K2.6'],
  [/kimi-k2\.5/, 'moonshotai/Kimi-K2.5'],
  [/kimi-k2-thinking/, 'moonshotai/Kimi-K2-Thinking'],
  [/kimi-k2-(instruct-)?0905/, 'moonshotai/Kimi-K2-Instruct-0905'],
  [/kimi-k2/, 'moonshotai/Kimi-K2-Instruct'],
  [/kimi-dev-72b/, 'moonshotai/Kimi-Dev-72B'],
  [/deepseek-v3\.2-exp/, 'deepseek-ai/DeepSeek-V3.2-Exp'],
  [/deepseek-v3\.2/, 'deepseek-ai/DeepSeek-V3.2'],
  [/deepseek-(chat-)?v3\.1-terminus/, 'deepseek-ai/DeepSeek-V3.1-Terminus'],
  [/deepseek-(chat-)?v3\.1/, 'deepseek-ai/DeepSeek-V3.1'],
  [/deepseek-(chat-)?v3-0324/, 'deepseek-ai/DeepSeek-V3-0324'],
  [/deepseek-(chat|v3)$/, 'deepseek-ai/DeepSeek-V3'],
  // The distilled R1s are Llama and Qwen models with their base's vocabulary, not DeepSeek's.
  [/deepseek-r1-distill-llama-70b/, 'deepseek-ai/DeepSeek-R1-Distill-Llama-70B'],
  [/deepseek-r1-distill-qwen-32b/, 'deepseek-ai/DeepSeek-R1-Distill-Qwen-32B'],
  [/deepseek-r1-distill-qwen-14b/, 'deepseek-ai/DeepSeek-R1-Distill-Qwen-14B'],
  [/deepseek-r1-0528-qwen3-8b/, 'deepseek-ai/DeepSeek-R1-0528-Qwen3-8B'],
  [/deepseek-r1/, 'deepseek-ai/DeepSeek-R1-0528'],
  [/qwen3-coder-30b-a3b/, 'Qwen/Qwen3-Coder-30B-A3B-Instruct'],
  [/qwen3-coder/, 'Qwen/Qwen3-Coder-480B-A35B-Instruct'],
  [/qwen3-235b-a22b-thinking-2507/, 'Qwen/Qwen3-235B-A22B-Thinking-2507'],
  [/qwen3-30b-a3b/, 'Qwen/Qwen3-30B-A3B'],
  [/qwen3-32b/, 'Qwen/Qwen3-32B'],
  // Every Qwen3 text model shares one vocabulary and one set of added tokens.
  [/qwen3/, 'Qwen/Qwen3-235B-A22B-Instruct-2507'],
  [/qwen-?2\.5-coder-32b/, 'Qwen/Qwen2.5-Coder-32B-Instruct'],
  [/qwen-?2\.5/, 'Qwen/Qwen2.5-72B-Instruct'],
  [/qwq-32b/, 'Qwen/QwQ-32B'],
  // OpenRouter lists Z.ai's models as `z-ai/glm-…`; the weights live under `zai-org/GLM-…`. Hosted-only
  // variants (`glm-5-turbo`) use the tokenizer of the open model they derive from.
  [/glm-5\.3-?flash/, 'zai-org/GLM-5.3-Flash'],
  [/glm-5\.2/, 'zai-org/GLM-5.2'],
  [/glm-5\.1/, 'zai-org/GLM-5.1'],
  [/glm-5/, 'zai-org/GLM-5'],
  [/glm-4\.7/, 'zai-org/GLM-4.7'],
  [/glm-4\.6v/, 'zai-org/GLM-4.6V'],
  [/glm-4\.6/, 'zai-org/GLM-4.6'],
  [/glm-4\.5v/, 'zai-org/GLM-4.5V'],
  [/glm-4\.5-air/, 'zai-org/GLM-4.5-Air'],
  [/glm-4\.5/, 'zai-org/GLM-4.5'],
  [/glm-4-32b/, 'zai-org/GLM-4-32B-0414'],
  [/gpt-oss-20b/, 'openai/gpt-oss-20b'],
  [/gpt-oss/, 'openai/gpt-oss-120b'],
  [/minimax-m3/, 'MiniMaxAI/MiniMax-M3'],
  [/minimax-m2\.1/, 'MiniMaxAI/MiniMax-M2.1'],
  [/minimax-m2/, 'MiniMaxAI/MiniMax-M2'],
  [/minimax-m1/, 'MiniMaxAI/MiniMax-M1-80k'],
  [/minimax-01/, 'MiniMaxAI/MiniMax-Text-01'],
];

/**
 * The tokenizer repo for a model id (`moonshotai/kimi-k2-0905` → `moonshotai/Kimi-K2-Instruct-0905`).
 * Unknown ids fall back to the id itself (minus an OpenRouter variant suffix such as `:free`), which is right
 * for ids that already name a Hub repo (SGLang serves under the repo name).
 */
export function tokenizerRepo(modelId: string): string {
  const id = modelId.trim().replace(/:[\w.-]+$/, '');
  const lower = id.toLowerCase();
  for (const [re, repo] of TOKENIZER_REPOS) if (re.test(lower)) return repo;
  return id;
}

export interface TokenizerRequest {
  /** The model id of the exchange; picks the Hub repo. */
  model?: string;
  /** Used when there is no model id. */
  family?: FamilyId;
  /** A local folder with `tiktoken.model` (+ `tokenizer_config.json`) or `tokenizer.json`; wins over everything. */
  tokenizerDir?: string;
  /** Data dir: Hub downloads go to `{cacheDir}/tokenizers/{repo}/`, the Kimi rank cache beside them. */
  cacheDir?: string;
  /**
   * The folder of the tokenizers shipped with Tokenscope (default: `tokenizers/` beside `dist/`, or at the repository
   * root); `false` leaves them out. A shipped tokenizer wins over the cache and the Hub.
   */
  bundledDir?: string | false;
  /**
   * Never touch the network; a tokenizer neither shipped nor already cached is a TokenizerMissingError (a UserError)
   * that says how to download it.
   */
  offline?: boolean;
  hub?: HubOptions;
  onWarning?: (message: string) => void;
}

const TIKTOKEN_FILES = ['tiktoken.model', 'tokenizer_config.json'];
const JSON_FILES = ['tokenizer.json'];

/** Finds, downloads if needed, and loads the tokenizer for a model. Failures are UserErrors with one clear line. */
export async function loadTokenizer(req: TokenizerRequest): Promise<Tokenizer> {
  const cacheDir = req.cacheDir ? join(req.cacheDir, 'tokenizers') : undefined;
  if (req.tokenizerDir) return loadFromDir(req.tokenizerDir, req.tokenizerDir, cacheDir, req.onWarning);
  const repo = tokenizerRepoFor(req);
  const local = localTokenizerDir(req);
  if (local) return loadFromDir(local, repo, cacheDir, req.onWarning);
  if (!cacheDir) throw new UserError(`no data dir to keep the ${repo} tokenizer in: pass --tokenizer-dir`);
  const dir = join(cacheDir, ...repo.split('/'));
  if (req.offline) {
    // Offline is the caller's choice (`--offline`, export, the extension until asked to download): say where
    // Tokenscope looked and how to get the tokenizer there.
    const pick = req.model ? `--model ${req.model}` : `--family ${req.family}`;
    throw new TokenizerMissingError(
      `no tokenizer for ${repo} in ${dir}; run \`tokenscope tokens ${pick} --data-dir ${req.cacheDir} FILE\` once to download it, ` +
        'or pass --tokenizer-dir',
      repo,
      dir,
    );
  }
  await download(repo, dir, req.hub);
  return loadFromDir(dir, repo, cacheDir, req.onWarning);
}

/**
 * The folder `loadTokenizer` reads for a request without downloading anything: the folder named, else the shipped
 * copy, else the data dir's cached download; undefined when the tokenizer would have to come from the Hub.
 * Throws the UserError of `tokenizerRepoFor` when the request names no model.
 */
export function localTokenizerDir(
  req: Pick<TokenizerRequest, 'model' | 'family' | 'tokenizerDir' | 'cacheDir' | 'bundledDir'>,
): string | undefined {
  if (req.tokenizerDir) return req.tokenizerDir;
  const repo = tokenizerRepoFor(req);
  const shipped = bundledTokenizerDir(repo, req.bundledDir);
  if (shipped) return shipped;
  if (!req.cacheDir) return undefined;
  const dir = join(req.cacheDir, 'tokenizers', ...repo.split('/'));
  return hasFiles(dir, TIKTOKEN_FILES) || hasFiles(dir, JSON_FILES) ? dir : undefined;
}

/** The Hub repo a request resolves to (a model id first, then the family's default). */
export function tokenizerRepoFor(req: Pick<TokenizerRequest, 'model' | 'family'>): string {
  if (req.model) return tokenizerRepo(req.model);
  if (req.family) return getFamily(req.family).tokenizer.repo;
  throw new UserError('no model id to choose a tokenizer for: pass --model or --tokenizer-dir');
}

/**
 * Tokenizers kept for a long-lived host (the extension, the worker): loading costs 0.2–3 s and tens of MB, so
 * each is loaded once. A failed load (offline, missing file) is not kept: the next request tries again.
 */
export class TokenizerPool {
  private readonly loaded = new Map<string, Promise<Tokenizer>>();

  async get(req: TokenizerRequest): Promise<Tokenizer> {
    const key = req.tokenizerDir ? `dir:${req.tokenizerDir}` : `repo:${tokenizerRepoFor(req)}`;
    const have = this.loaded.get(key);
    // A load that may download waits for one in flight that may not, and tries itself when that one found nothing.
    if (have) return req.offline ? have : have.catch((e) => (e instanceof TokenizerMissingError ? this.get(req) : Promise.reject(e)));
    const p = loadTokenizer(req);
    this.loaded.set(key, p);
    p.catch(() => {
      if (this.loaded.get(key) === p) this.loaded.delete(key);
    });
    return p;
  }

  clear(): void {
    this.loaded.clear();
  }
}

/** Loads whatever layout the folder holds. */
export function loadFromDir(dir: string, label: string, cacheDir?: string, onWarning?: (m: string) => void): Tokenizer {
  if (checkTokenizerDir(dir) === 'tiktoken') return loadKimiTokenizer({ dir, cacheDir, name: `${label} (tiktoken)`, onWarning });
  return loadHfTokenizer(dir, `${label} (tokenizer.json)`);
}

export { checkTokenizerDir };

function hasFiles(dir: string, files: string[]): boolean {
  return files.every((f) => existsSync(join(dir, f)));
}

/**
 * Fetches the tokenizer files of `repo` into `dir`. Kimi repos ship `tiktoken.model` + `tokenizer_config.json`;
 * the others `tokenizer.json` (+ an optional `tokenizer_config.json`). `tokenizer.json` is tried first, except
 * for Moonshot repos, where one briefly existed and was withdrawn.
 */
async function download(repo: string, dir: string, hub: HubOptions = {}): Promise<void> {
  const layouts = /^moonshotai\//i.test(repo) ? [TIKTOKEN_FILES, JSON_FILES] : [JSON_FILES, TIKTOKEN_FILES];
  for (const [first, ...rest] of layouts) {
    if (!(await downloadHubFile(repo, first, join(dir, first), hub))) continue;
    for (const f of rest) {
      if (!(await downloadHubFile(repo, f, join(dir, f), hub))) throw new UserError(`${repo} has ${first} but no ${f}`);
    }
    // Optional companion of tokenizer.json: special flags and the chat template's tokens.
    if (first === 'tokenizer.json') await downloadHubFile(repo, 'tokenizer_config.json', join(dir, 'tokenizer_config.json'), hub);
    return;
  }
  throw new UserError(
    `no tokenizer found for ${repo} on the Hugging Face Hub (neither tokenizer.json nor tiktoken.model); ` +
      'check the model id or pass --tokenizer-dir',
  );
}

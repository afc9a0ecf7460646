/**
 * SGLang client (wire-formats.md §2, §8): checks the server first (`/health`, `/get_model_info`, `/v1/models`), then
 * either the OpenAI-compatible `/v1/chat/completions` (reasoning split out, special tokens kept in the text) or the
 * native `/generate` from `input_ids` rendered with the model's own chat template, so the response carries
 * `output_ids`: the exact generated tokens, special ids included.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { UserError } from '../model';
import { loadTokenizer, tokenizerRepo } from '../tokens/resolve';
import { readChatTemplate, renderChat } from '../tokens/template';
import type { Tokenizer } from '../tokens/types';
import { fetchJson, send, UnreachableError, type HttpResponse } from './http';
import { translateBody } from '../wire/dialects';

export { renderChat };

export const SGLANG_DEFAULT_URL = 'http://127.0.0.1:30000';

/** What the server says about itself. */
export interface SglangServer {
  url: string;
  /** `--model-path`: a Hub id or a folder on the server's machine. */
  modelPath: string;
  tokenizerPath?: string;
  /** The id `/v1/models` lists (`--served-model-name`). */
  servedModel?: string;
}

export interface GenerateOptions {
  /** A chat template to use instead of the model's. */
  chatTemplate?: string;
  tokenizer?: Tokenizer;
  /** Tokenscope's data dir: the Hub tokenizer cache, used when the model folder is not on this machine. */
  cacheDir?: string;
  /** Default `max_new_tokens` when the body sets no `max_tokens` (SGLang's own default is small). */
  maxNewTokens?: number;
}

type Body = Record<string, unknown>;

export class SglangClient {
  readonly url: string;

  constructor(
    url: string = SGLANG_DEFAULT_URL,
    private readonly dispatcher?: Dispatcher,
  ) {
    this.url = url.replace(/\/+$/, '').replace(/\/v1$/, '');
  }

  /** Health and model info, or a UserError saying plainly what is wrong with the server. */
  async check(signal?: AbortSignal): Promise<SglangServer> {
    const get = <T>(path: string) =>
      fetchJson<T>({ url: this.url + path, method: 'GET', headers: {}, signal, dispatcher: this.dispatcher }, { maxRetries: 0 });
    try {
      const health = await send({ url: `${this.url}/health`, method: 'GET', headers: {}, signal, dispatcher: this.dispatcher });
      await health.discard();
      if (health.status !== 200) {
        throw new UserError(
          `the SGLang server at ${this.url} is not ready: GET /health answered ${health.status} (still loading the model, or unhealthy)`,
        );
      }
      const info = await get<{ model_path?: unknown; tokenizer_path?: unknown }>('/get_model_info');
      if (info.error || typeof info.value?.model_path !== 'string') {
        throw new UserError(`the server at ${this.url} does not look like SGLang: GET /get_model_info → ${info.error ?? 'no model_path'}`);
      }
      const models = await get<{ data?: { id?: unknown }[] }>('/v1/models');
      const served = models.value?.data?.[0]?.id;
      return {
        url: this.url,
        modelPath: info.value.model_path,
        tokenizerPath: typeof info.value.tokenizer_path === 'string' ? info.value.tokenizer_path : undefined,
        servedModel: typeof served === 'string' ? served : undefined,
      };
    } catch (e) {
      if (e instanceof UnreachableError) {
        throw new UserError(
          `the SGLang server at ${this.url} is not reachable (${e.reason}); start one with \`python -m sglang.launch_server --model-path <model> --tool-call-parser kimi_k2 --reasoning-parser kimi_k2 --port 30000\`, or give its URL as sglang:URL`,
        );
      }
      throw e;
    }
  }

  /** The request body as SGLang's `/v1/chat/completions` gets it. */
  chatBody(body: Body, server: SglangServer): Body {
    return {
      ...translateBody(body, 'sglang'),
      ...(server.servedModel && { model: server.servedModel }),
      separate_reasoning: true,
      // Keep special tokens in the text, so markup the parsers leave behind stays visible.
      skip_special_tokens: false,
    };
  }

  /** The native `/generate` body: the chat rendered with the model's template, tokenized to `input_ids`. */
  async generateBody(body: Body, server: SglangServer, opts: GenerateOptions = {}): Promise<Body> {
    const translated = translateBody(body, 'sglang');
    const template = opts.chatTemplate ?? findChatTemplate(server, opts.cacheDir);
    if (!template) {
      throw new UserError(
        `no chat template for ${server.servedModel ?? server.modelPath}: the model folder "${server.modelPath}" is not on this machine and no cached tokenizer_config.json has one; pass a template file`,
      );
    }
    const prompt = renderChat(template, translated);
    const tokenizer =
      opts.tokenizer ??
      (await loadTokenizer(
        localDir(server) ? { tokenizerDir: localDir(server) } : { model: server.servedModel ?? server.modelPath, cacheDir: opts.cacheDir },
      ));
    const sampling: Body = {
      max_new_tokens: num(body.max_completion_tokens) ?? num(body.max_tokens) ?? opts.maxNewTokens ?? 4096,
      skip_special_tokens: false,
    };
    for (const k of ['temperature', 'top_p', 'top_k', 'min_p', 'stop', 'frequency_penalty', 'presence_penalty'] as const) {
      if (body[k] !== undefined && body[k] !== null) sampling[k] = body[k];
    }
    return { input_ids: tokenizer.encode(prompt), sampling_params: sampling, stream: body.stream === true };
  }

  /** The path each API is served at. */
  static path(api: 'chat' | 'native'): string {
    return api === 'native' ? '/generate' : '/v1/chat/completions';
  }

  /** Sends a body built by `chatBody` or `generateBody`; resolves at the response head. */
  post(api: 'chat' | 'native', body: Body, signal?: AbortSignal): Promise<HttpResponse> {
    return send({
      url: this.url + SglangClient.path(api),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
      dispatcher: this.dispatcher,
    });
  }
}

/** The model folder, when it is a folder on this machine (SGLang usually runs locally). */
function localDir(server: SglangServer): string | undefined {
  for (const p of [server.tokenizerPath, server.modelPath]) {
    if (p && existsSync(p) && statSync(p).isDirectory()) return p;
  }
  return undefined;
}

/** `chat_template.jinja`, else `tokenizer_config.json`'s `chat_template` (a string, or named templates), in the model folder or the tokenizer cache. */
export function findChatTemplate(server: SglangServer, cacheDir?: string): string | undefined {
  const dirs = [
    localDir(server),
    cacheDir && join(cacheDir, 'tokenizers', ...tokenizerRepo(server.servedModel ?? server.modelPath).split('/')),
  ];
  for (const dir of dirs) {
    const t = dir ? readChatTemplate(dir) : undefined;
    if (t) return t.source;
  }
  return undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * The prompt side of a turn: the request's messages and tools rendered with the model's own chat template (from
 * the folder the tokenizer comes from; downloaded from the Hub like the tokenizer files when absent) and encoded
 * with the model's tokenizer: the exact prompt ids the model should have been fed.
 */
import { join } from 'node:path';
import { UserError } from '../model';
import { translateBody } from '../upstream/translate';
import { downloadHubFile } from './hub';
import { tokenizerRepoFor, type TokenizerRequest } from './resolve';
import { readChatTemplate, renderChat, type ChatTemplate } from './template';
import type { Tokenizer } from './types';

export interface PromptTokens {
  ids: number[];
  /** The rendered prompt text. */
  text: string;
  /** The template file used. */
  template: string;
}

type Body = Record<string, unknown>;

/** Whether a raw request body can be rendered by a chat template: a Chat Completions body with a messages array. */
export function isChatBody(body: unknown): body is Body {
  return typeof body === 'object' && body !== null && Array.isArray((body as Body).messages);
}

/** Renders and encodes a Chat Completions request body (the thinking switch in any dialect becomes `thinking`). */
export function promptTokens(tokenizer: Tokenizer, template: ChatTemplate, body: Body): PromptTokens {
  const text = renderChat(template, translateBody(body, 'sglang'));
  return { ids: tokenizer.encode(text), text, template: template.file };
}

/**
 * Finds the chat template for a tokenizer request, once per tokenizer: `--tokenizer-dir` or the tokenizer's cache
 * folder; when the cache folder has none, `chat_template.jinja` is fetched from the Hub (unless offline). A model
 * without one is a UserError that says where Tokenscope looked.
 */
export class ChatTemplatePool {
  private readonly found = new Map<string, Promise<ChatTemplate>>();

  get(req: TokenizerRequest): Promise<ChatTemplate> {
    const key = req.tokenizerDir ? `dir:${req.tokenizerDir}` : `repo:${tokenizerRepoFor(req)}`;
    let p = this.found.get(key);
    if (!p) {
      p = findTemplate(req);
      this.found.set(key, p);
    }
    return p;
  }
}

async function findTemplate(req: TokenizerRequest): Promise<ChatTemplate> {
  if (req.tokenizerDir) {
    const t = readChatTemplate(req.tokenizerDir);
    if (t) return t;
    throw new UserError(
      `no chat template in ${req.tokenizerDir} (neither chat_template.jinja nor a chat_template in tokenizer_config.json); ` +
        "put the model's chat_template.jinja there to get prompt ids",
    );
  }
  const repo = tokenizerRepoFor(req);
  if (!req.cacheDir) throw new UserError(`no data dir to keep the ${repo} chat template in: pass --tokenizer-dir`);
  const dir = join(req.cacheDir, 'tokenizers', ...repo.split('/'));
  const local = readChatTemplate(dir);
  if (local) return local;
  if (!req.offline && (await downloadHubFile(repo, 'chat_template.jinja', join(dir, 'chat_template.jinja'), req.hub))) {
    const fetched = readChatTemplate(dir);
    if (fetched) return fetched;
  }
  throw new UserError(
    `no chat template for ${repo}: ${req.offline ? `${dir} has` : 'the Hugging Face Hub has'} neither chat_template.jinja nor a chat_template ` +
      'in tokenizer_config.json, so prompt ids cannot be rendered',
  );
}

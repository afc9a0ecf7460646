/**
 * The prompt side of a turn: the request's messages and tools rendered with the model's own chat template (from
 * the folder the tokenizer comes from; downloaded from the Hub like the tokenizer files when absent) and encoded
 * with the model's tokenizer: the exact prompt ids the model should have been fed.
 */
import { join } from 'node:path';
import { UserError } from '../model';
import { translateBody } from '../wire/dialects';
import { downloadHubFile } from './hub';
import { loadTokenizer, tokenizerRepoFor, type TokenizerRequest } from './resolve';
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

/**
 * Renders and encodes a Chat Completions request body (the thinking switch in any dialect becomes `thinking`).
 * Messages go to the template as sent, except what servers normalise before rendering: content given as text parts
 * is joined into one string (with newlines, as vLLM does for string-content templates), and, when the template
 * cannot take a `null` content (Qwen3's tests `'</think>' in content`), null content is rendered as empty text.
 */
export function promptTokens(tokenizer: Tokenizer, template: ChatTemplate, body: Body): PromptTokens {
  // The thinking switch in any dialect becomes `thinking`; the request's own kwargs (Qwen's `enable_thinking`) stay.
  const translated = translateBody(body, 'sglang');
  const kwargs = {
    ...(isObj(translated.chat_template_kwargs) ? translated.chat_template_kwargs : {}),
    ...(isObj(body.chat_template_kwargs) ? body.chat_template_kwargs : {}),
  };
  if (Object.keys(kwargs).length) translated.chat_template_kwargs = kwargs;
  const messages = (translated.messages as unknown[]).map(joinTextParts);
  let text: string;
  try {
    text = renderChat(template, { ...translated, messages });
  } catch (e) {
    if (!messages.some((m) => isObj(m) && m.content === null)) throw e;
    text = renderChat(template, {
      ...translated,
      messages: messages.map((m) => (isObj(m) && m.content === null ? { ...m, content: '' } : m)),
    });
  }
  return { ids: tokenizer.encode(text), text, template: template.file };
}

const isObj = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

function joinTextParts(m: unknown): unknown {
  if (!isObj(m) || !Array.isArray(m.content)) return m;
  const parts = m.content as unknown[];
  if (!parts.every((p) => isObj(p) && p.type === 'text' && typeof p.text === 'string')) return m;
  return { ...m, content: parts.map((p) => (p as { text: string }).text).join('\n') };
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

/** The prompt ids of one request body, loading the tokenizer and its chat template (for one-off callers: `compare`). */
export async function requestPromptTokens(req: TokenizerRequest, body: unknown): Promise<PromptTokens> {
  if (!isChatBody(body)) throw new UserError('the request is not a Chat Completions body');
  const tokenizer = await loadTokenizer(req);
  return promptTokens(tokenizer, await new ChatTemplatePool().get(req), body);
}

/**
 * The prompt ids of a request, or why there are none (no request, not a Chat Completions body, no chat template, a
 * template that fails on it): a note for the user, never a failure of the completion side.
 */
export async function promptFor(
  tokenizer: Tokenizer,
  templates: ChatTemplatePool,
  req: TokenizerRequest,
  body: unknown,
): Promise<{ prompt?: PromptTokens; note?: string }> {
  if (body === undefined || body === null) return { note: 'no request' };
  if (!isChatBody(body)) return { note: 'the request is not a Chat Completions body' };
  try {
    return { prompt: promptTokens(tokenizer, await templates.get(req), body) };
  } catch (e) {
    if (e instanceof UserError) return { note: e.message };
    throw e;
  }
}

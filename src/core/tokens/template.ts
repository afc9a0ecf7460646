/**
 * Chat templates: the model's own Jinja template (`chat_template.jinja`, or `chat_template` in
 * `tokenizer_config.json`, from the same folder the tokenizer comes from), rendered through @huggingface/jinja the
 * way Hugging Face's `apply_chat_template` renders it: the messages, the tools, `add_generation_prompt`, the special
 * tokens of the config (`bos_token`, `eos_token`, …) and the request's `chat_template_kwargs` as variables.
 * The SGLang client (upstream/sglang.ts) and the prompt side of the token view (prompt.ts) both render through here.
 */
import { Template } from '@huggingface/jinja';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../model';

type Body = Record<string, unknown>;

export interface ChatTemplate {
  /** The Jinja source. */
  source: string;
  /** Where it came from (`chat_template.jinja` or `tokenizer_config.json`), for messages. */
  file: string;
  /** The special-token variables the config defines (`bos_token`, `eos_token`, `pad_token`, `unk_token`). */
  tokens: Record<string, string>;
}

const TOKEN_VARIABLES = ['bos_token', 'eos_token', 'pad_token', 'unk_token', 'sep_token', 'cls_token', 'mask_token'];

/** `chat_template.jinja`, else `tokenizer_config.json`'s `chat_template` (a string, or named templates: `default` first). */
export function readChatTemplate(dir: string): ChatTemplate | undefined {
  const config = readConfig(dir);
  const tokens = config ? tokenVariables(config) : {};
  const jinja = join(dir, 'chat_template.jinja');
  if (existsSync(jinja)) return { source: readFileSync(jinja, 'utf8'), file: jinja, tokens };
  const t = config?.chat_template;
  const source = typeof t === 'string' ? t : Array.isArray(t) ? (t.find((x) => x?.name === 'default') ?? t[0])?.template : undefined;
  return typeof source === 'string' ? { source, file: join(dir, 'tokenizer_config.json'), tokens } : undefined;
}

function readConfig(dir: string): Body | undefined {
  const file = join(dir, 'tokenizer_config.json');
  if (!existsSync(file)) return undefined;
  try {
    const v: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof v === 'object' && v !== null ? (v as Body) : undefined;
  } catch {
    return undefined; // an unreadable config is the same as none: the caller reports the missing template
  }
}

/** Special tokens as template variables; a config may spell one as `{"__type": "AddedToken", "content": …}`. */
function tokenVariables(config: Body): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of TOKEN_VARIABLES) {
    const v = config[k];
    const s = typeof v === 'string' ? v : typeof v === 'object' && v !== null ? (v as { content?: unknown }).content : undefined;
    if (typeof s === 'string') out[k] = s;
  }
  return out;
}

/**
 * Renders a Chat Completions body with a chat template (`chat_template_kwargs` become template variables), with the
 * generation prompt for the assistant's turn, as a server renders the prompt it feeds the model.
 */
export function renderChat(template: string | ChatTemplate, body: Body): string {
  const t = typeof template === 'string' ? { source: template, tokens: {} } : template;
  const kwargs =
    typeof body.chat_template_kwargs === 'object' && body.chat_template_kwargs !== null ? (body.chat_template_kwargs as Body) : {};
  try {
    return compiled(t.source).render({
      ...t.tokens,
      messages: body.messages ?? [],
      tools: body.tool_choice === 'none' ? undefined : body.tools,
      add_generation_prompt: true,
      ...kwargs,
    });
  } catch (e) {
    throw new UserError(`the chat template could not be rendered: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`);
  }
}

/**
 * Parsed templates by source. Parsing a chat template costs about 10× rendering it (Qwen3's: ~5 ms against
 * ~0.7 ms), and a batch renders thousands of requests with the same few templates. Bounded: the oldest goes first.
 */
const parsed = new Map<string, Template>();
const PARSED_KEPT = 16;

function compiled(source: string): Template {
  let t = parsed.get(source);
  if (!t) {
    t = new Template(source);
    if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
    parsed.set(source, t);
  }
  return t;
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A deterministic mixed corpus for the tokenizer oracle test and the benchmark: real code and English docs from
 * installed packages, interleaved with Chinese, Japanese, Korean, emoji, accented text, odd whitespace and every
 * Kimi control marker (as they appear in real turns, and glued to text).
 */

const root = join(__dirname, '..', '..', '..');

const SOURCES = [
  'node_modules/undici/README.md',
  'node_modules/typescript/lib/lib.es5.d.ts',
  'node_modules/openai/README.md',
  'node_modules/undici/lib/dispatcher/client-h1.js',
  'node_modules/ajv/README.md',
];

const MULTILINGUAL = [
  '三国演义是中国古典四大名著之一，讲述了东汉末年到西晋初年之间近百年的历史风云。「天下大势，分久必合，合久必分。」',
  '这个函数返回一个布尔值——如果文件存在就返回真，否则返回假。请检查参数是否正确：路径、编码、权限。',
  '日本語のテキストです。東京は日本の首都で、カタカナとひらがなと漢字が混ざっています。ツールを呼び出します！',
  '한국어 문장도 포함합니다. 토크나이저는 모든 언어를 처리해야 합니다.',
  'Emoji: 👋🏽 👨‍👩‍👧‍👦 🇯🇵 ✅ ❌ 🚀🔥 — and symbols ≤ ≥ ≠ → ∑ ∫ 〇 Ⅻ ½ ² ①',
  "Accents: naïve café résumé Ωmega Ελληνικά русский текст. SHOUTING DON'T WON'T I'M YOU'RE we'll it'd",
  'Mixed 混合 text with English and 中文 and 日本語 in one line: value=42，结果：OK。',
  'Whitespace:\t\ttabs,\u00a0nbsp,\u3000ideographic space,\u2028line sep, trailing   \n\n\r\n  \n',
  'Numbers 1234567890 3.14159 1e-10 0xdeadBEEF 12,345,678',
];

const KIMI_TURNS = [
  '<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>',
  '<|im_user|>user<|im_middle|>读一下 README.md 然后总结。<|im_end|><|im_assistant|>assistant<|im_middle|>',
  '<think>The user wants a summary. I should call the read tool first.</think>I will read the file.',
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "README.md", "limit": 200}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:1<|tool_call_argument_begin|>{"command":"ls -la && echo \\"完成\\""}<|tool_call_end|><|tool_call_begin|>functions.edit:2<|tool_call_argument_begin|>{"old":"a","new":"b"}<|tool_call_end|><|tool_calls_section_end|>',
  'glued<|im_end|>text[BOS][EOS][EOT][UNK][PAD]<|media_begin|><|media_content|><|media_end|><|media_pad|><|reserved_token_163700|>',
  'truncated marker <|tool_calls_section_end| and <|tool_call_end without closing',
];

/** The corpus, `bytes` long (UTF-8, approximately: blocks are cut at character boundaries). */
export function mixedCorpus(bytes = 1 << 20): string {
  const texts = SOURCES.map((p) => readFileSync(join(root, p), 'utf8'));
  const extras = [...MULTILINGUAL, ...KIMI_TURNS];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const src = texts[i % texts.length];
    const start = (i * 4093) % Math.max(1, src.length - 4096);
    const block = src.slice(start, start + 4096) + '\n' + extras[i % extras.length] + '\n';
    parts.push(block);
    size += Buffer.byteLength(block);
  }
  return parts.join('');
}

/** Every Kimi marker string, for tests that need each one. */
export const KIMI_SAMPLE_TURNS: readonly string[] = KIMI_TURNS;
export const MULTILINGUAL_SAMPLES: readonly string[] = MULTILINGUAL;

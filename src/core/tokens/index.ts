/**
 * Tokens: the model's own tokenizer (Kimi's tiktoken ranks, or a tokenizer.json), where it comes from (a local
 * folder, the download cache, the Hugging Face Hub), the token stream of an exchange, and token accounting.
 * A long-lived host (the extension) runs this off its main thread through `TokenWorker` (worker.ts).
 *
 * Code imports each module of this folder directly (./resolve, ./stream, ./accounting…); this file re-exports only
 * what is imported through it.
 */
export { loadFromDir } from './resolve';

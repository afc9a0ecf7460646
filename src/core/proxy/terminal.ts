/**
 * Did a response reach its terminal event? Agents close the connection as soon as they have it (Codex right after
 * `response.completed`, before the upstream ends the body): such an exchange is complete, not cut short.
 * Only the last few kilobytes of the decoded response are looked at, once, when the client has gone.
 */

/** How much of the end of a response is kept (as references to its chunks, no copy) for the look. */
export const TERMINAL_TAIL_BYTES = 8 * 1024;

const TERMINAL = [
  /^data: ?\[DONE\]\s*$/m, // Chat Completions, OpenRouter
  /"type"\s*:\s*"message_stop"/, // Anthropic Messages
  /"type"\s*:\s*"response\.(?:completed|incomplete|failed)"/, // OpenAI Responses
  /"finish_reason"\s*:\s*(?:"[^"]+"|\{)/, // Chat Completions' last choice chunk, SGLang's native /generate
];

/** True when `tail` (the end of an SSE response) holds a terminal event, complete up to its blank line. */
export function sawTerminalEvent(tail: string): boolean {
  const end = tail.lastIndexOf('\n\n') >= 0 ? tail.lastIndexOf('\n\n') : tail.lastIndexOf('\r\n\r\n');
  if (end < 0) return false;
  const events = tail.slice(0, end);
  return TERMINAL.some((re) => re.test(events));
}

/** Keeps references to the last chunks of a stream, at least TERMINAL_TAIL_BYTES of them. */
export class ChunkTail {
  private chunks: Uint8Array[] = [];
  private bytes = 0;

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.chunks.length > 1 && this.bytes - this.chunks[0].length >= TERMINAL_TAIL_BYTES) this.bytes -= this.chunks.shift()!.length;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - TERMINAL_TAIL_BYTES)).toString('utf8');
  }
}

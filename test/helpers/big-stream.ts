/**
 * A large OpenRouter-style Kimi K2 chat stream, recorded through the real capture store as the proxy records one
 * (1 MB chunks): keep-alive comments, reasoning deltas, content deltas with leaked tool-call markup now and then,
 * a streamed tool call, the usage chunk and `[DONE]`. Deterministic for a given size, so two runs compare.
 *
 * Run as a script to record one by hand: `node --import tsx test/helpers/big-stream.ts DATA_DIR MB [PAD]` prints the id.
 */
import { openStore } from '../../src/core/capture/store';
import { OPENROUTER_CHAT } from './exchanges';

/** Bytes per recorded chunk (a read from the upstream). */
const CHUNK = 1 << 20;
const HEAD =
  '{"id":"gen-1777319903-e8Q7Du7mmUgiYBDzoHE6","provider":"Chutes","model":"moonshotai/kimi-k2-0905","object":"chat.completion.chunk","created":1777319903,"choices":[{"index":0,"delta":';
const TAIL = ',"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}';
const WORDS = [
  ' The',
  ' user',
  ' wants',
  ' the',
  ' weather',
  ' in',
  ' Florence',
  ',',
  ' Italy',
  '.',
  ' Olá',
  ' café',
  ' 😀',
  ' — ',
  '\n',
  ' read',
  ' src/a.ts',
  ' {"path":',
];
const LEAK =
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "a"}<|tool_call_end|><|tool_calls_section_end|>';

/**
 * The stream's SSE events, about `bytes` in all: 40% reasoning, then content, then one tool call. `pad`: bytes of
 * `system_fingerprint` added to every chunk beyond `bytes`, so a padded stream says exactly what the unpadded one
 * says in a larger body.
 */
export function* bigStreamEvents(bytes: number, pad = 0): Generator<string> {
  let size = 0;
  const fingerprint = pad ? `"system_fingerprint":"fp_${'0'.repeat(Math.max(0, pad - 26))}",` : '';
  const head = HEAD.replace('"choices"', `${fingerprint}"choices"`);
  const delta = (d: object) => {
    const s = `data: ${head}${JSON.stringify(d)}${TAIL}\n\n`;
    size -= fingerprint.length;
    return s;
  };
  const emit = (s: string) => {
    size += s.length;
    return s;
  };
  yield emit(': OPENROUTER PROCESSING\n\n');
  yield emit(delta({ role: 'assistant', content: '' }));
  for (let i = 0; size < bytes * 0.4; i++) {
    const w = WORDS[i % WORDS.length] + WORDS[(i * 7) % WORDS.length] + WORDS[(i * 11) % WORDS.length];
    yield emit(
      delta({
        role: 'assistant',
        content: '',
        reasoning: w,
        reasoning_details: [{ type: 'reasoning.text', text: w, format: 'unknown', index: 0 }],
      }),
    );
    if (i % 5000 === 4999) yield emit(': OPENROUTER PROCESSING\n\n');
  }
  for (let i = 0; size < bytes * 0.98; i++) {
    const w =
      i % 5000 === 4999
        ? LEAK
        : WORDS[i % WORDS.length] + WORDS[(i * 5) % WORDS.length] + WORDS[(i * 13) % WORDS.length] + WORDS[(i * 3) % WORDS.length];
    yield emit(delta({ role: 'assistant', content: w }));
  }
  yield emit(
    delta({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }] }),
  );
  const args = JSON.stringify({ path: 'src/a.ts', note: 'x'.repeat(200) });
  for (let i = 0; i < args.length; i += 7) {
    yield emit(delta({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 7) } }] }));
  }
  yield emit(`data: ${head}{},"finish_reason":"tool_calls","native_finish_reason":"tool_calls","logprobs":null}]}\n\n`);
  yield emit(
    `data: ${JSON.stringify({ id: 'gen-1777319903-e8Q7Du7mmUgiYBDzoHE6', provider: 'Chutes', model: 'moonshotai/kimi-k2-0905', object: 'chat.completion.chunk', created: 1777319903, choices: [{ index: 0, delta: { content: '' }, finish_reason: null }], usage: { prompt_tokens: 120, completion_tokens: 1000, total_tokens: 1120 } })}\n\n`,
  );
  yield emit('data: [DONE]\n\n');
}

/** Records the stream in the store at `dataDir` in 1 MB chunks; resolves to the exchange id. */
export async function recordBigStream(dataDir: string, bytes: number, pad = 0): Promise<string> {
  const store = await openStore(dataDir, { analyze: false, maxBodyBytes: 1 << 30 });
  try {
    const w = store.begin({
      ...OPENROUTER_CHAT,
      requestBody: JSON.stringify({
        model: 'moonshotai/kimi-k2-0905',
        stream: true,
        messages: [{ role: 'user', content: 'Read src/a.ts' }],
        tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
      }),
    });
    w.responseStarted(200, { 'content-type': 'text/event-stream' });
    let pending: string[] = [];
    let length = 0;
    let t = 0;
    for (const ev of bigStreamEvents(bytes, pad)) {
      pending.push(ev);
      length += ev.length;
      if (length >= CHUNK) {
        w.chunk(Buffer.from(pending.join('')), (t += 1));
        pending = [];
        length = 0;
      }
    }
    if (pending.length) w.chunk(Buffer.from(pending.join('')), (t += 1));
    return (await w.finish()).id;
  } finally {
    await store.close();
  }
}

if (require.main === module) {
  const [dir, mb, pad] = process.argv.slice(2);
  recordBigStream(dir, Number(mb) * 1e6, Number(pad ?? 0)).then((id) => process.stdout.write(`${id}\n`));
}

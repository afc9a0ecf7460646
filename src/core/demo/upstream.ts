/**
 * The demo upstream: a tiny OpenAI-compatible server on 127.0.0.1 that answers like an OpenRouter provider named
 * "Demo (local)". It needs no key and reaches nothing: every answer is one of the fixed cases in ./cases.ts, picked
 * by the `x-tokenscope-demo-case` request header, or the agent scenario for a real agent's requests.
 *
 *   POST /v1/chat/completions   streamed (SSE, OpenRouter chunk shape) or whole; no usage, since nothing is billed
 *                               and the demo runs no tokenizer that could count honestly
 *   GET  /v1/models             the demo model
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEMO_CASE_HEADER, DEMO_MODEL, DEMO_PROVIDER, agentScript, demoCase, scriptMessage, type DemoScript } from './cases';

export interface DemoUpstream {
  /** `http://127.0.0.1:<port>`: the base URL of the `demo` route. */
  readonly url: string;
  close(): Promise<void>;
}

export interface DemoUpstreamOptions {
  /** Pause between streamed chunks, ms (default 8): enough for the wire timing to show, short enough to feel instant. */
  chunkDelayMs?: number;
}

const MAX_BODY = 8 * 1024 * 1024;

/** A JSON answer; it names the demo provider, as every demo answer does, so its capture is marked as a demo one. */
function json(res: ServerResponse, status: number, body: object): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ provider: DEMO_PROVIDER, ...body }));
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) parts.push(c);
    });
    req.on('end', () => {
      try {
        resolve(size > MAX_BODY ? undefined : JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', () => resolve(undefined));
  });
}

let seq = 0;
function generationId(): string {
  return `gen-demo-${Date.now().toString(36)}-${(seq++).toString(36)}`;
}

export async function startDemoUpstream(opts: DemoUpstreamOptions = {}): Promise<DemoUpstream> {
  const delay = opts.chunkDelayMs ?? 8;
  const open = new Set<ServerResponse>();

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = (await readJson(req)) as { model?: unknown; stream?: unknown; messages?: unknown; tools?: unknown } | undefined;
    if (!body || typeof body !== 'object' || !Array.isArray(body.messages)) {
      return json(res, 400, { error: { code: 400, message: 'the demo upstream expects a chat completions request with "messages"' } });
    }
    const header = req.headers[DEMO_CASE_HEADER];
    const picked = typeof header === 'string' ? demoCase(header) : undefined;
    if (typeof header === 'string' && !picked) return json(res, 400, { error: { code: 400, message: `no demo case "${header}"` } });
    const script: DemoScript = picked?.script ?? agentScript(body as Parameters<typeof agentScript>[0]);
    const model = typeof body.model === 'string' && body.model ? body.model : DEMO_MODEL;
    const id = generationId();
    const created = Math.floor(Date.now() / 1000);
    const turn = scriptMessage(script);

    if (body.stream !== true) {
      const message: Record<string, unknown> = { role: 'assistant', content: turn.content ?? '', reasoning: turn.reasoning ?? null };
      if (turn.toolCalls.length) {
        message.tool_calls = turn.toolCalls.map((c) => ({
          index: c.index,
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        }));
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-generation-id': id });
      res.end(
        JSON.stringify({
          id,
          provider: DEMO_PROVIDER,
          model,
          object: 'chat.completion',
          created,
          choices: [{ index: 0, finish_reason: script.finishReason, native_finish_reason: script.finishReason, message }],
        }),
      );
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-generation-id': id });
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) => {
      if (!res.destroyed)
        res.write(
          `data: ${JSON.stringify({ id, provider: DEMO_PROVIDER, model, object: 'chat.completion.chunk', created, choices, ...extra })}\n\n`,
        );
    };
    let call = -1;
    for (const d of script.deltas) {
      if (res.destroyed) return;
      const delta: Record<string, unknown> = { role: 'assistant', content: d.toolCall ? null : (d.content ?? '') };
      if (d.reasoning !== undefined) delta.reasoning = d.reasoning;
      if (d.toolCall) {
        if (d.toolCall.name !== undefined) call++;
        const fn =
          d.toolCall.name !== undefined ? { name: d.toolCall.name, arguments: d.toolCall.arguments } : { arguments: d.toolCall.arguments };
        delta.tool_calls = [
          d.toolCall.id !== undefined ? { index: call, id: d.toolCall.id, type: 'function', function: fn } : { index: call, function: fn },
        ];
      }
      send([{ index: 0, delta, finish_reason: null, native_finish_reason: null }]);
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    }
    send([
      {
        index: 0,
        delta: { role: 'assistant', content: '' },
        finish_reason: script.finishReason,
        native_finish_reason: script.finishReason,
      },
    ]);
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    open.add(res);
    res.once('close', () => open.delete(res));
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
    if (req.method === 'POST' && /\/chat\/completions$/.test(path)) {
      chat(req, res).catch((e) => json(res, 500, { error: { code: 500, message: String((e as Error)?.message ?? e) } }));
      return;
    }
    req.resume();
    if (req.method === 'GET' && /\/models$/.test(path)) {
      return json(res, 200, {
        object: 'list',
        data: [{ id: DEMO_MODEL, object: 'model', owned_by: DEMO_PROVIDER, name: `${DEMO_MODEL} (Tokenscope demo)` }],
      });
    }
    json(res, 404, {
      error: { code: 404, message: `the Tokenscope demo upstream serves /v1/chat/completions and /v1/models, not ${req.method} ${path}` },
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const r of open) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}

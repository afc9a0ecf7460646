import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadInput, loadRequest } from '../../../src/cli/input';
import { openStore } from '../../../src/core/capture/store';
import { UserError } from '../../../src/core/model';
import { FIREWORKS_LEAK, KIMI, OPENCODE_1021 } from '../checks/helpers';
import { recording } from '../../helpers/shared';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Uint8Array) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};
const chat = JSON.stringify({
  id: 'gen-1',
  object: 'chat.completion',
  model: KIMI,
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: FIREWORKS_LEAK } }],
});

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof UserError && e.exitCode === 2 && re.test(e.message) && !e.message.includes('\n'));
}

describe('loadInput', () => {
  test('raw native text', async () => {
    const x = await loadInput(file('leak.txt', OPENCODE_1021));
    assert.equal(x.response.protocol, 'native-text');
    assert.equal(x.response.message.content, OPENCODE_1021);
    assert.equal(x.label, 'leak.txt');
  });

  test('an OpenAI chat.completion JSON, with its model', async () => {
    const x = await loadInput(file('resp.json', chat));
    assert.equal(x.response.protocol, 'openai-chat');
    assert.equal(x.model, KIMI);
  });

  test('a real OpenRouter SSE dump', async (t) => {
    const r = recording('18-kimi-fantasy-openrouter-tool-stream');
    if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
    const x = await loadInput(file('stream.sse', r.files['stream.sse']));
    assert.equal(x.response.streamed, true);
    assert.equal(x.response.message.toolCalls[0].name, 'weather');
  });

  test('a repro bundle carries its exchange and request', async () => {
    const body = chat;
    const bundle = {
      format: 'tokenscope.repro',
      version: 1,
      exchange: {
        id: 'b1',
        sessionId: 's',
        startedAt: 1,
        state: 'complete',
        route: 'openrouter',
        upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
        method: 'POST',
        path: '/api/v1/chat/completions',
        requestHeaders: {},
        requestBody: JSON.stringify({
          model: KIMI,
          messages: [{ role: 'user', content: 'post' }],
          tools: [{ type: 'function', function: { name: 'channel_reply' } }],
        }),
      },
      response: { encoding: 'utf8', body, chunks: [{ t: 5, offset: 0, length: new TextEncoder().encode(body).length }] },
    };
    const x = await loadInput(file('case.tokenscope.json', JSON.stringify(bundle, null, 2)));
    assert.equal(x.exchange?.id, 'b1');
    assert.equal(x.request?.tools[0].name, 'channel_reply');
    assert.equal(x.response.message.content, FIREWORKS_LEAK);
    assert.equal((await loadInput(file('renamed.json', JSON.stringify(bundle, null, 2)))).exchange?.id, 'b1');
    await rejects(
      loadInput(file('bad.tokenscope.json', '{"format": "tokenscope.repro", "version": 1}')),
      /not a usable Tokenscope repro bundle/,
    );
  });

  test('a capture id (or a unique prefix) from the capture store', async () => {
    const dataDir = join(dir, 'store');
    const store = await openStore(dataDir, { analyze: false });
    const w = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/api/v1/chat/completions',
      requestHeaders: {},
      requestBody: JSON.stringify({ model: KIMI, messages: [] }),
    });
    w.responseStarted(200, { 'content-type': 'application/json' });
    w.chunk(new TextEncoder().encode(chat));
    await w.finish();
    await store.close();
    const x = await loadInput(w.id.slice(0, 11), { dataDir });
    assert.equal(x.label, `capture ${w.id}`);
    assert.equal(x.response.message.content, FIREWORKS_LEAK);
    assert.equal(x.request?.model, KIMI);
    await rejects(loadInput('zzzzzzzzzzzzzz', { dataDir }), /no such file or capture id/);
  });

  test('unusable input: one-line UserErrors', async () => {
    await rejects(loadInput(join(dir, 'missing.json')), /no such file/);
    await rejects(loadInput(dir), /is a directory/);
    await rejects(loadInput(file('empty.txt', '  \n')), /empty\.txt is empty/);
    await rejects(loadInput(file('req.json', JSON.stringify({ model: KIMI, messages: [] }))), /looks like a request body .*--request/);
    await rejects(
      loadInput(file('models.json', '{"object": "list", "data": []}')),
      /^models\.json is JSON of an unknown API \(an "object" document\), not a response/,
    );
    await rejects(loadInput(file('gz.bin', new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0]))), /gzip-compressed/);
    await rejects(loadInput(file('bin.dat', new Uint8Array([0x50, 0x4b, 3, 4, 0, 0, 1, 2]))), /binary/);
  });

  test('JSON that is no response says what it is', async () => {
    await rejects(loadInput(file('n.json', 'null')), /^n\.json is JSON null, not a response$/);
    await rejects(loadInput(file('s.json', '"str"')), /^s\.json is a JSON string, not a response$/);
    await rejects(loadInput(file('num.json', '42\n')), /^num\.json is a JSON number, not a response$/);
    await rejects(
      loadInput(file('resp-req.json', JSON.stringify({ model: 'm', input: 'hi' }))),
      /looks like a request body \(it has "input"\)/,
    );
    // The document's own values are not echoed to the terminal.
    await assert.rejects(
      loadInput(file('o.json', '{"object": "secret-value"}')),
      (e: Error) => e instanceof UserError && !e.message.includes('secret'),
    );
  });

  test('model text that opens with { or [ is model text, whatever the file is called', async () => {
    const texts = [
      '{"name": "get_weather", "parameters": {"city": "Paris"}}', // Llama 3 JSON call
      '[{"name": "get_weather", "arguments": {"city": "Paris"}}]', // Mistral pre-v11 list, without its marker
      '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Par', // Mistral, cut mid-value
      '[get_weather(city="Paris")]', // Llama 4 pythonic
      '{"city": "Paris", "unit": "c"}', // argument text a user pasted
      '{"input": "ls -la"}', // argument text, not a Responses request (no model)
      '{"name": "get_weather", "parameters": {"city": "Par', // a Llama call cut short
      '{garbage', // not JSON at all
      '{"a": 1}}', // JSON followed by more text
      '[1, 2]',
    ];
    for (const [i, text] of texts.entries()) {
      for (const name of [`m${i}.txt`, `m${i}.json`]) {
        const x = await loadInput(file(name, text));
        assert.equal(x.response.protocol, 'native-text', `${name}: ${text}`);
        assert.equal(x.response.message.content, text, name);
        assert.deepEqual(x.response.wireIssues, [], name);
      }
    }
  });

  test('a JSON response cut short loads with a truncated body, even before its shape is certain', async () => {
    for (const [name, text, protocol] of [
      ['cut1.json', '{"id":"gen-1","object":"chat.compl', 'openai-chat'],
      ['cut2.txt', '{"id":"chatcmpl-9","created":17', 'openai-chat'],
      ['cut3.json', '{"id":"msg_01","type":"message","role":"assi', 'anthropic-messages'],
      ['cut4.json', '{"id":"resp_1","object":"resp', 'openai-responses'],
      ['cut5.json', chat.slice(0, 120), 'openai-chat'],
    ] as const) {
      const x = await loadInput(file(name, text));
      assert.equal(x.response.protocol, protocol, name);
      assert.equal(x.response.wireIssues.at(-1)?.code, 'truncated-body', name);
      assert.equal(x.response.terminated, false, name);
    }
  });

  test('raw model text is still text, JSON-looking only when it opens like JSON', async () => {
    const x = await loadInput(file('prose.txt', 'hello world'));
    assert.equal(x.response.protocol, 'native-text');
    assert.equal((await loadInput(file('md.txt', '[1] First, read the file.'))).response.message.content, '[1] First, read the file.');
    assert.equal((await loadInput(file('null.txt', 'null'))).response.message.content, 'null');
  });

  test('damaged but usable bodies load, their damage is left to the checks', async () => {
    const x = await loadInput(file('cut.json', chat.slice(0, chat.length - 20)));
    assert.equal(x.response.wireIssues[0]?.code, 'truncated-body');
  });
});

describe('loadRequest', () => {
  test('normalizes a request body file', () => {
    const req = loadRequest(
      file(
        'request.json',
        JSON.stringify({
          model: KIMI,
          messages: [{ role: 'user', content: 'hi' }],
          tools: [{ type: 'function', function: { name: 'read' } }],
        }),
      ),
    );
    assert.equal(req.tools[0].name, 'read');
  });

  const oneLine = (re: RegExp) => (e: unknown) => e instanceof UserError && re.test(e.message) && !e.message.includes('\n');

  test('refuses what is not a JSON object', () => {
    assert.throws(
      () => loadRequest(file('r.txt', 'model: kimi')),
      oneLine(/^r\.txt is not valid JSON \(unexpected character\); --request takes the request body/),
    );
    assert.throws(() => loadRequest(file('r2.json', '[1]')), oneLine(/r2\.json is a JSON array, not a JSON object/));
    assert.throws(() => loadRequest(file('r3.json', 'null')), oneLine(/r3\.json is JSON null, not a JSON object/));
    assert.throws(() => loadRequest(join(dir, 'nope.json')), /no such file/);
  });

  test('an empty, binary or cut-short file is one clear line, without its bytes or a parser message', () => {
    assert.throws(
      () => loadRequest(file('empty-req.txt', '')),
      oneLine(/^empty-req\.txt is empty; --request takes the request body the agent sent, as JSON$/),
    );
    assert.throws(() => loadRequest(file('req.dat', new Uint8Array([0x50, 0x4b, 3, 4, 0, 0xff, 1, 2]))), oneLine(/^req\.dat is binary; /));
    assert.throws(
      () => loadRequest(file('cut-req.json', '{"model": "m", "messages": [')),
      oneLine(/^cut-req\.json is not valid JSON \(cut short at byte 28\); /),
    );
    assert.throws(
      () => loadRequest(file('cut-req.json', '{"model": "m", "messages": [')),
      (e: Error) => !/Unexpected|Expected/.test(e.message),
    );
  });

  test('a response given as the request is refused', () => {
    assert.throws(
      () => loadRequest(file('resp-as-req.json', chat)),
      oneLine(/^resp-as-req\.json is a response body \(openai-chat\), not a request: give the response as FILE/),
    );
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { k2vvSample, toYaml, writeK2vv, writePromptfoo } from '../../../src/core/export/testcase';
import { prepareRepro } from '../../../src/core/export/repro';
import { UserError } from '../../../src/core/model';
import { brokenKimiCapture, TOOLS } from '../../fixtures/export/captures';

/** js-yaml is what promptfoo itself loads configs with; it is in the tree only as a dependency of a dev tool. */
async function yamlLoader(): Promise<((s: string) => unknown) | undefined> {
  // Not a declared dependency (no types): loaded by name, and the tests skip without it.
  const name = 'js-yaml';
  try {
    const mod = (await import(name)) as { load?: (s: string) => unknown; default?: { load: (s: string) => unknown } };
    return mod.load ?? mod.default?.load;
  } catch {
    return undefined;
  }
}

test('a K2VV sample is the Chat Completions body, with only what create() accepts', () => {
  const r = prepareRepro(brokenKimiCapture());
  const line = writeK2vv(r);
  assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), 'one JSONL line');
  const sample = JSON.parse(line);
  const original = JSON.parse(r.exchange.requestBody!);
  assert.deepEqual(sample.messages, original.messages);
  assert.deepEqual(sample.tools, TOOLS);
  assert.equal(sample.model, 'moonshotai/kimi-k2-0905');
  assert.equal(sample.temperature, 0.6);
  assert.equal(sample.usage, undefined, 'OpenRouter-only keys would make create() raise');
  const { dropped, command } = k2vvSample(r);
  assert.deepEqual(dropped, ['usage']);
  assert.equal(
    command,
    `python tool_calls_eval.py samples.jsonl --model 'moonshotai/kimi-k2-0905' --base-url 'https://openrouter.ai/api/v1' --api-key "$OPENROUTER_API_KEY" --extra-body '{"provider":{"only":["chutes"],"allow_fallbacks":false}}'`,
  );
});

test('the promptfoo case replays the conversation with tools, pin and both assertions', async (t) => {
  const load = await yamlLoader();
  if (!load) return t.skip('js-yaml is not installed, so the YAML cannot be parsed here');
  const r = prepareRepro(brokenKimiCapture());
  const doc = load(writePromptfoo(r)) as {
    prompts: string[];
    providers: { id: string; config: Record<string, unknown> & { passthrough: Record<string, unknown> } }[];
    tests: { vars: { messages: unknown }; assert: { type: string; value?: string }[] }[];
  };
  assert.deepEqual(doc.prompts, ['{{ messages | dump }}']);
  const [p] = doc.providers;
  assert.equal(p.id, 'openrouter:moonshotai/kimi-k2-0905');
  assert.deepEqual(p.config.tools, TOOLS);
  assert.equal(p.config.tool_choice, 'auto');
  assert.equal(p.config.temperature, 0.6);
  assert.deepEqual(p.config.passthrough.provider, { only: ['chutes'], allow_fallbacks: false });
  assert.equal(p.config.stream, undefined);
  assert.deepEqual(doc.tests[0].vars.messages, JSON.parse(r.exchange.requestBody!).messages);
  assert.deepEqual(doc.tests[0].assert, [{ type: 'is-valid-openai-tools-call' }, { type: 'finish-reason', value: 'tool_calls' }]);
});

test('the YAML writer round-trips awkward values', async (t) => {
  const load = await yamlLoader();
  if (!load) return t.skip('js-yaml is not installed, so the YAML cannot be parsed here');
  const value = {
    'key with: colon': [
      '',
      ' lead',
      'yes',
      'null',
      '123',
      '- dash',
      '# hash',
      'a\nb',
      'tab\there',
      '\u2028sep\u0085nel',
      'ü 🎉',
      '{{ x }}',
      "'q'",
      '"dq"',
    ],
    empty: { list: [], map: {} },
    nested: [[1, 2], [{ a: null, b: true, c: -1.5e-7 }]],
  };
  assert.deepEqual(load(toYaml(value)), value);
});

test('an Anthropic Messages exchange is no K2VV or promptfoo case: a clear error', () => {
  const c = brokenKimiCapture();
  c.exchange.path = '/v1/messages';
  c.exchange.upstreamUrl = 'https://api.anthropic.com/v1/messages';
  c.exchange.route = 'anthropic';
  c.exchange.requestBody = JSON.stringify({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  c.exchange.responseHeaders = { 'content-type': 'application/json' };
  const body = new TextEncoder().encode(
    JSON.stringify({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn' }),
  );
  const r = prepareRepro({ ...c, responseBody: body, chunks: [{ t: 1, offset: 0, length: body.length }] });
  assert.throws(
    () => writeK2vv(r),
    (e: unknown) => e instanceof UserError && /needs a Chat Completions request.*anthropic-messages/.test(e.message),
  );
  assert.throws(
    () => writePromptfoo(r),
    (e: unknown) => e instanceof UserError && /anthropic-messages/.test(e.message),
  );
});

test('a GET with no request body (/models) is named by its method and path, not as "speaks unknown"', () => {
  const c = brokenKimiCapture();
  c.exchange.method = 'GET';
  c.exchange.path = '/openrouter/v1/models';
  c.exchange.upstreamUrl = 'https://openrouter.ai/api/v1/models';
  delete c.exchange.requestBody;
  c.exchange.responseHeaders = { 'content-type': 'application/json' };
  const body = new TextEncoder().encode(JSON.stringify({ data: [{ id: 'moonshotai/kimi-k2-0905' }] }));
  const r = prepareRepro({ ...c, responseBody: body, chunks: [{ t: 1, offset: 0, length: body.length }] });
  assert.throws(
    () => writeK2vv(r),
    (e: unknown) =>
      e instanceof UserError &&
      e.message ===
        'a K2 Vendor Verifier sample needs a Chat Completions request (messages); this exchange (GET /openrouter/v1/models) is not one',
  );
});

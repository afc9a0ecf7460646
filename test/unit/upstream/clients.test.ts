import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { retryAfterMs, errorLine } from '../../../src/core/upstream/http';
import { UserError } from '../../../src/core/model';
import { openRouterApiRoot, pinProvider, resolveOpenRouterKey } from '../../../src/core/upstream/openrouter';
import { parseTarget, targetLabel } from '../../../src/core/upstream/run';
import { findChatTemplate, renderChat } from '../../../src/core/upstream/sglang';
import { thinkingIntent, translateBody } from '../../../src/core/wire/dialects';

test('thinking switch: read from every dialect, written in the target backend’s', () => {
  assert.equal(thinkingIntent({ thinking: { type: 'enabled' } }), true);
  assert.equal(thinkingIntent({ chat_template_kwargs: { thinking: false } }), false);
  assert.equal(thinkingIntent({ reasoning: { effort: 'high' } }), true);
  assert.equal(thinkingIntent({ reasoning: { effort: 'none' } }), false);
  assert.equal(thinkingIntent({ messages: [] }), undefined);

  const fromMoonshot = { model: 'm', messages: [], thinking: { type: 'disabled' }, provider: { only: ['x'] }, usage: { include: true } };
  assert.deepEqual(translateBody(fromMoonshot, 'sglang'), { model: 'm', messages: [], chat_template_kwargs: { thinking: false } });
  const fromSglang = {
    model: 'm',
    messages: [],
    chat_template_kwargs: { thinking: true, preserve_thinking: true },
    separate_reasoning: true,
  };
  assert.deepEqual(translateBody(fromSglang, 'moonshot'), { model: 'm', messages: [], thinking: { type: 'enabled' } });
  assert.deepEqual(translateBody(fromSglang, 'openrouter'), { model: 'm', messages: [], reasoning: { enabled: true } });
  assert.deepEqual(translateBody(fromSglang, 'sglang').chat_template_kwargs, { preserve_thinking: true, thinking: true });
  const untouched = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.6 };
  assert.deepEqual(translateBody(untouched, 'openrouter'), untouched, 'nothing to translate: the body as captured');
  assert.equal(fromMoonshot.provider.only[0], 'x', 'input not mutated');
});

test('provider pin replaces contradicting routing and keeps the rest', () => {
  const body = { model: 'm', provider: { order: ['a', 'b'], ignore: ['c'], quantizations: ['fp8'], allow_fallbacks: true } };
  assert.deepEqual(pinProvider(body, 'fireworks').provider, { quantizations: ['fp8'], only: ['fireworks'], allow_fallbacks: false });
});

test('Retry-After in seconds or as an HTTP date; error lines from the usual error shapes', () => {
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs('0.5'), 500);
  assert.equal(retryAfterMs('Wed, 21 Oct 2026 07:28:05 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT')), 5000);
  assert.equal(retryAfterMs('soon'), undefined);
  assert.equal(retryAfterMs(undefined), undefined);
  assert.equal(errorLine(401, '{"error":{"code":401,"message":"No auth credentials found"}}'), 'HTTP 401: No auth credentials found');
  assert.equal(
    errorLine(502, '{"error":{"message":"Provider returned error","metadata":{"provider_name":"X","raw":"boom"}}}'),
    'HTTP 502: Provider returned error (X: boom)',
  );
  assert.equal(errorLine(404, '{"detail":"Not Found"}'), 'HTTP 404: Not Found');
  assert.equal(errorLine(500, '<html>oops\nmore</html>'), 'HTTP 500: <html>oops');
});

test('targets, API roots and the key', () => {
  assert.deepEqual(parseTarget('openrouter:deepinfra'), { kind: 'openrouter', provider: 'deepinfra' });
  assert.deepEqual(parseTarget('openrouter'), { kind: 'openrouter' });
  assert.deepEqual(parseTarget('sglang'), { kind: 'sglang', url: 'http://127.0.0.1:30000', api: 'chat' });
  assert.equal(targetLabel(parseTarget('sglang-native:http://gpu:8000')), 'sglang-native:http://gpu:8000');
  assert.throws(() => parseTarget('sglang:gpu'), /not an http\(s\) URL/);
  assert.throws(() => parseTarget('vllm'), /unknown target "vllm"/);
  assert.equal(openRouterApiRoot('http://127.0.0.1:9/'), 'http://127.0.0.1:9/api/v1');
  assert.equal(openRouterApiRoot('https://openrouter.ai/api/v1'), 'https://openrouter.ai/api/v1');
  // The `serve --openrouter-url` form (…/api) names the same root, so one URL works for serve, rerun and compare.
  assert.equal(openRouterApiRoot('http://127.0.0.1:9/api'), 'http://127.0.0.1:9/api/v1');
  assert.throws(
    () => openRouterApiRoot('not-a-url'),
    (e: unknown) => e instanceof UserError && /must be an http\(s\) URL/.test(e.message),
  );
  assert.throws(() => openRouterApiRoot('ftp://openrouter.ai'), UserError);
  assert.equal(resolveOpenRouterKey(undefined, { OPENROUTER_API_KEY: 'sk-or-env' }), 'sk-or-env');
  assert.equal(resolveOpenRouterKey('sk-or-secret', { OPENROUTER_API_KEY: 'sk-or-env' }), 'sk-or-secret', 'SecretStorage wins');
  assert.throws(() => resolveOpenRouterKey(undefined, {}), /no OpenRouter API key/);
});

test('chat template: found in the model folder, rendered with chat_template_kwargs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-template-'));
  try {
    const server = { url: 'http://x', modelPath: dir };
    assert.equal(findChatTemplate(server), undefined);
    writeFileSync(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        chat_template: [
          { name: 'tool_use', template: 'T' },
          { name: 'default', template: 'D' },
        ],
      }),
    );
    assert.equal(findChatTemplate(server), 'D');
    writeFileSync(
      join(dir, 'chat_template.jinja'),
      '{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if thinking %}<think>{% endif %}',
    );
    const t = findChatTemplate(server)!;
    assert.equal(
      renderChat(t, { messages: [{ role: 'user', content: 'hi' }], chat_template_kwargs: { thinking: true } }),
      '<user>hi<think>',
    );
    assert.throws(() => renderChat('{% for %}', { messages: [] }), /the chat template could not be rendered/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

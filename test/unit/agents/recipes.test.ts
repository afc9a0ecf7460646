import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AGENT_IDS, agentRecipe, agentRecipes, shellQuote } from '../../../src/core/agents/recipes';

const proxyUrl = 'http://127.0.0.1:8719';

test('OpenCode: OPENCODE_CONFIG_CONTENT with an @ai-sdk/openai-compatible provider whose baseURL is the proxy', () => {
  const r = agentRecipe('opencode', { proxyUrl, model: 'moonshotai/kimi-k2.5' });
  assert.equal(r.launch.kind, 'terminal');
  if (r.launch.kind !== 'terminal') return;
  const cfg = JSON.parse(r.launch.env.OPENCODE_CONFIG_CONTENT);
  assert.equal(cfg.provider.tokenscope.npm, '@ai-sdk/openai-compatible');
  assert.equal(cfg.provider.tokenscope.options.baseURL, 'http://127.0.0.1:8719/openrouter/v1');
  assert.equal(cfg.provider.tokenscope.options.apiKey, '{env:OPENROUTER_API_KEY}');
  assert.equal(cfg.model, 'tokenscope/moonshotai/kimi-k2.5');
  assert.equal(r.launch.command, 'opencode');
  assert.match(r.launch.shell, /^OPENCODE_CONFIG_CONTENT='\{.*\}' opencode$/);
});

test('Claude Code: ANTHROPIC_BASE_URL without /v1, a gateway token, ANTHROPIC_API_KEY left empty', () => {
  const r = agentRecipe('claude-code', { proxyUrl });
  assert.equal(r.wireApi, 'anthropic-messages');
  if (r.launch.kind !== 'terminal') return assert.fail('terminal expected');
  assert.equal(r.launch.env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:8719/openrouter');
  assert.equal(r.launch.env.ANTHROPIC_API_KEY, '');
  assert.deepEqual(r.launch.secrets, [{ env: 'ANTHROPIC_AUTH_TOKEN', key: 'OPENROUTER_API_KEY' }]);
  assert.equal(
    r.launch.shell,
    `ANTHROPIC_BASE_URL=http://127.0.0.1:8719/openrouter ANTHROPIC_API_KEY='' ANTHROPIC_AUTH_TOKEN="$OPENROUTER_API_KEY" claude`,
  );
  const direct = agentRecipe('claude-code', { proxyUrl, route: 'anthropic' });
  if (direct.launch.kind !== 'terminal') return assert.fail('terminal expected');
  assert.equal(direct.launch.env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:8719/anthropic');
  assert.deepEqual(direct.launch.secrets, [{ env: 'ANTHROPIC_API_KEY', key: 'ANTHROPIC_API_KEY' }]);
});

test('Codex: -c model_providers.… with wire_api="responses"', () => {
  const r = agentRecipe('codex', { proxyUrl, route: 'sglang', model: 'kimi' });
  assert.equal(r.wireApi, 'responses');
  if (r.launch.kind !== 'terminal') return assert.fail('terminal expected');
  const configs = r.launch.args.filter((_, i, a) => a[i - 1] === '-c');
  assert.deepEqual(configs, [
    'model_provider="tokenscope"',
    'model_providers.tokenscope.name="Tokenscope"',
    'model_providers.tokenscope.base_url="http://127.0.0.1:8719/sglang/v1"',
    'model_providers.tokenscope.env_key="SGLANG_API_KEY"',
    'model_providers.tokenscope.wire_api="responses"',
  ]);
  assert.deepEqual(r.launch.args.slice(-2), ['-m', 'kimi']);
});

test('Aider: OPENAI_API_BASE ending in /v1 and an openai/ model', () => {
  const r = agentRecipe('aider', { proxyUrl, route: 'default', model: 'moonshotai/kimi-k2-0905' });
  if (r.launch.kind !== 'terminal') return assert.fail('terminal expected');
  assert.equal(r.launch.env.OPENAI_API_BASE, 'http://127.0.0.1:8719/v1');
  assert.deepEqual(r.launch.secrets, [{ env: 'OPENAI_API_KEY', key: 'OPENROUTER_API_KEY' }]);
  assert.deepEqual(r.launch.args.slice(0, 2), ['--model', 'openai/moonshotai/kimi-k2-0905']);
});

test('Cline, Roo Code, Kilo Code: "OpenAI Compatible" settings; Continue: a config.yaml model entry', () => {
  for (const id of ['cline', 'roo-code', 'kilo-code'] as const) {
    const r = agentRecipe(id, { proxyUrl, route: 'lab' });
    if (r.launch.kind !== 'settings') return assert.fail('settings expected');
    assert.ok(r.launch.steps.some((s) => s.includes('"OpenAI Compatible"')));
    assert.deepEqual(r.launch.fields[0], { label: 'Base URL', value: 'http://127.0.0.1:8719/u/lab/v1' });
    assert.equal(r.launch.fields[1].value, 'your TOKENSCOPE_LAB_API_KEY');
  }
  const c = agentRecipe('continue', { proxyUrl });
  if (c.launch.kind !== 'settings') return assert.fail('settings expected');
  assert.match(
    c.launch.snippet!.text,
    /provider: openai\n {4}model: moonshotai\/kimi-k2-0905\n {4}apiBase: http:\/\/127\.0\.0\.1:8719\/openrouter\/v1\n/,
  );
  assert.equal(agentRecipes({ proxyUrl }).length, AGENT_IDS.length);
  for (const r of agentRecipes({ proxyUrl })) assert.ok(!/sk-/.test(JSON.stringify(r)), `${r.id} carries no key`);
});

test('shell quoting', () => {
  assert.equal(shellQuote('plain-value_1.2'), 'plain-value_1.2');
  assert.equal(shellQuote(''), "''");
  assert.equal(shellQuote(`it's`), `'it'\\''s'`);
});

test('Qwen Code: OpenAI auth from three variables, the key from the route, the terminal ready to launch', () => {
  const r = agentRecipe('qwen-code', { proxyUrl: 'http://127.0.0.1:8719', route: 'sglang', model: 'Qwen/Qwen3-Coder-480B' });
  assert.equal(r.launch.kind, 'terminal');
  if (r.launch.kind !== 'terminal') return;
  assert.deepEqual(r.launch.env, { OPENAI_BASE_URL: 'http://127.0.0.1:8719/sglang/v1', OPENAI_MODEL: 'Qwen/Qwen3-Coder-480B' });
  assert.deepEqual(r.launch.secrets, [{ env: 'OPENAI_API_KEY', key: 'SGLANG_API_KEY' }]);
  assert.equal(
    r.launch.shell,
    'OPENAI_BASE_URL=http://127.0.0.1:8719/sglang/v1 OPENAI_MODEL=Qwen/Qwen3-Coder-480B OPENAI_API_KEY="$SGLANG_API_KEY" qwen --auth-type openai',
  );
  assert.ok(AGENT_IDS.includes('qwen-code'));
});

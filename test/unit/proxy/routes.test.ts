import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorBody, speaksAnthropic } from '../../../src/core/proxy/errors';
import { isLoopbackHost, refusal } from '../../../src/core/proxy/guard';
import { pinHonoured, requestInfo, servedProvider } from '../../../src/core/proxy/openrouter';
import { redactText } from '../../../src/core/redact';
import { BadPathError, checkRouteName, checkUpstreamUrl, resolveRoute, routePrefix, routePrefixes } from '../../../src/core/proxy/routes';
import { noRouteMessage, statusBody } from '../../../src/core/proxy/local';
import { VERSION } from '../../../src/core/version';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../helpers/shared';
import { agentSessionId } from '../../../src/core/proxy/session';
import { agentFromHeaders } from '../../../src/core/proxy/user-agent';

test('routes map the first path segment to an upstream, keeping the rest and the query', () => {
  const r = (p: string, u = {}) => resolveRoute(p, u)?.upstreamUrl;
  assert.equal(r('/openrouter/v1/chat/completions'), 'https://openrouter.ai/api/v1/chat/completions');
  assert.equal(r('/anthropic/v1/messages/count_tokens?beta=true'), 'https://api.anthropic.com/v1/messages/count_tokens?beta=true');
  assert.equal(r('/openai/v1/responses'), 'https://api.openai.com/v1/responses');
  assert.equal(r('/sglang/generate'), 'http://127.0.0.1:30000/generate');
  assert.equal(r('/sglang/v1/models', { sglang: 'http://gpu-box:8000/' }), 'http://gpu-box:8000/v1/models');
  assert.equal(r('/v1/chat/completions'), 'https://openrouter.ai/api/v1/chat/completions', 'default is OpenRouter');
  assert.equal(r('/v1/models', { default: 'http://127.0.0.1:1234/base' }), 'http://127.0.0.1:1234/base/v1/models');
  assert.equal(
    r('/u/lab/v1/chat/completions', { custom: { lab: 'https://lab.example/api' } }),
    'https://lab.example/api/v1/chat/completions',
  );
  assert.equal(resolveRoute('/u/nope/v1/x', { custom: { lab: 'https://lab.example' } }), undefined);
  assert.equal(resolveRoute('/u/constructor/v1/x'), undefined, 'no prototype keys as upstream names');
  assert.equal(resolveRoute('/openrouterx/v1/x'), undefined, 'a route is a whole segment');
  assert.equal(r('/v1'), 'https://openrouter.ai/api/v1');
  assert.equal(r('/v1?x=1'), 'https://openrouter.ai/api/v1?x=1');
  for (const outside of ['/', '/health', '/favicon.ico', '/chat/completions', '/v2/models', '/v1x/models', '/?x=1']) {
    assert.equal(resolveRoute(outside, { default: 'http://127.0.0.1:1' }), undefined, `${outside} is outside every route`);
  }
  assert.equal(resolveRoute('/openrouter/v1/x')?.route, 'openrouter');
  assert.equal(resolveRoute('/v1/x')?.route, 'default');
  assert.equal(routePrefix('default'), '');
  assert.equal(routePrefix('sglang'), '/sglang');
  assert.equal(routePrefix('my lab'), '/u/my%20lab');
  assert.equal(checkUpstreamUrl('http://x:1/', '--upstream'), 'http://x:1');
  assert.throws(() => checkUpstreamUrl('ftp://x', '--upstream'), /must be http/);
  assert.throws(() => checkUpstreamUrl('nope', '--upstream'), /not a URL/);
});

test('only loopback Host names and loopback browser origins pass', () => {
  for (const h of ['127.0.0.1:8719', 'localhost:8719', 'localhost', '[::1]:8719', '127.0.0.2', 'app.localhost:1'])
    assert.ok(isLoopbackHost(h), h);
  for (const h of ['evil.example', 'evil.example:8719', '127.0.0.1.evil.example', '0.0.0.0', '', undefined])
    assert.ok(!isLoopbackHost(h), String(h));
  assert.equal(refusal({ host: '127.0.0.1:8719' }), undefined);
  assert.equal(refusal({ host: '127.0.0.1:8719', origin: 'http://localhost:5173' }), undefined);
  assert.match(refusal({ host: 'attacker.example' })!, /not a loopback name/);
  assert.match(refusal({ host: '127.0.0.1', origin: 'https://attacker.example' })!, /Origin/);
  assert.match(refusal({ host: '127.0.0.1', origin: 'null' })!, /Origin/);
});

test('agents are recognised from User-Agent and attribution headers', () => {
  const ua = (v: string, extra = {}) => agentFromHeaders({ 'user-agent': v, ...extra });
  assert.equal(ua('opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14'), 'opencode');
  assert.equal(ua('claude-cli/2.0.14 (external, cli)'), 'claude-code');
  assert.equal(ua('codex_cli_rs/0.162.1 (Ubuntu 24.4.0; x86_64)'), 'codex');
  assert.equal(ua('OpenAI/JS 6.49.0'), 'openai-sdk');
  assert.equal(ua('Anthropic/JS 1.14.0'), 'anthropic-sdk');
  assert.equal(ua('ai-sdk/openai-compatible/1.0.61 ai-sdk/provider-utils/3.0.20 runtime/node.js/20'), 'ai-sdk');
  assert.equal(ua('OpenAI/JS 5.0.0', { 'x-title': 'Roo Code' }), 'roo-code');
  assert.equal(ua('axios/1.7', { 'http-referer': 'https://cline.bot' }), 'cline');
  assert.equal(ua('MyTool/2.1'), 'mytool');
  assert.equal(agentFromHeaders({}), undefined);
});

test('OpenRouter facts: request model and pin, served provider, whether the pin held', () => {
  assert.deepEqual(requestInfo('{"model":"m","provider":{"only":["fireworks","novita"]}}'), { model: 'm', pin: ['fireworks', 'novita'] });
  assert.deepEqual(requestInfo('{"model":"m","provider":{"order":["chutes"],"allow_fallbacks":false}}'), { model: 'm', pin: ['chutes'] });
  assert.deepEqual(requestInfo('{"model":"m","provider":{"sort":"price"}}'), { model: 'm' });
  assert.deepEqual(requestInfo('{"truncated'), {});
  assert.deepEqual(requestInfo(undefined), {});
  assert.equal(servedProvider('data: {"id":"gen-1","provider":"Google AI Studio","model":"x"}'), 'Google AI Studio');
  assert.equal(
    servedProvider('data: {"choices":[{"delta":{"content":"\\"provider\\":\\"Liar\\""}}]}'),
    undefined,
    'model text cannot fake it',
  );
  assert.ok(pinHonoured(['google-ai-studio'], 'Google AI Studio'));
  assert.ok(pinHonoured(['fireworks/fp8'], 'Fireworks'));
  assert.ok(pinHonoured(['moonshotai'], 'Moonshot AI'));
  assert.ok(!pinHonoured(['fireworks'], 'Chutes'));
});

test('proxy errors take the shape of the API the client speaks', () => {
  assert.ok(speaksAnthropic('default', '/v1/messages', {}));
  assert.ok(speaksAnthropic('default', '/v1/messages/count_tokens?x=1', {}));
  assert.ok(speaksAnthropic('openrouter', '/openrouter/v1/chat/completions', { 'anthropic-version': '2023-06-01' }));
  assert.ok(!speaksAnthropic('openrouter', '/openrouter/v1/chat/completions', {}));
  assert.deepEqual(JSON.parse(errorBody(true, 502, 'down')), { type: 'error', error: { type: 'api_error', message: 'down' } });
  assert.deepEqual(JSON.parse(errorBody(false, 502, 'down')), { error: { message: 'down', type: 'upstream_error', code: 502 } });
});

test('a path that could leave its route or does not decode is refused; a base URL query stays; built-in names can be replaced', () => {
  for (const p of ['/%E0%A4%A/v1/models', '/u/lab/../../x', '/u/lab/%2E%2E/x', '/v1/.%2e/x', '/v1/..\\x', 'v1/x']) {
    assert.throws(() => resolveRoute(p, { custom: { lab: 'http://l' } }), BadPathError, p);
  }
  assert.equal(resolveRoute('/v1/models%2Fx', {})?.upstreamPath, '/api/v1/models%2Fx', 'an escaped slash is no climb');
  assert.equal(resolveRoute('/u/lab/v1/m?a=1', { custom: { lab: 'http://l/base?k=1' } })?.upstreamUrl, 'http://l/base/v1/m?a=1&k=1');
  assert.equal(resolveRoute('/openrouter/v1/m', { custom: { openrouter: 'http://mine:1/api' } })?.upstreamUrl, 'http://mine:1/api/v1/m');
  assert.equal(checkUpstreamUrl('http://x/api/?k=1', '--upstream'), 'http://x/api?k=1');
  assert.equal(checkRouteName('lab-2.x', '--custom'), 'lab-2.x');
  for (const bad of ['__proto__', 'constructor/x', '', '-x', 'a b'])
    assert.throws(() => checkRouteName(bad, '--custom'), /not a usable upstream name/, bad);
});

test('more agents by name; an agent session header becomes a stable session id, per agent', () => {
  const ua = (v: string) => agentFromHeaders({ 'user-agent': v });
  assert.equal(ua('QwenCode/0.24.4 (linux; x64)'), 'qwen-code');
  assert.equal(ua('qwencode/0.24.4'), 'qwen-code');
  assert.equal(ua('GeminiCLI/0.9.0 (linux; x64)'), 'gemini-cli');
  assert.equal(ua('kilo-cli/1.0 opencode/1.0'), 'kilo-cli');
  // The headers the Kilo CLI 7.7.7 sends (recorded through the proxy); the extension's X-Title alone stays kilo-code.
  const kilo = {
    'user-agent': 'Kilo-Code/7.7.7 ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14',
    'http-referer': 'https://kilocode.ai',
    'x-title': 'Kilo Code',
  };
  assert.equal(agentFromHeaders(kilo), 'kilo-cli');
  assert.equal(agentFromHeaders({ ...kilo, 'user-agent': 'Kilo-Code/4.90.0' }), 'kilo-code');
  // Cline CLI 3.0.65 names itself only through a header its providers.json settings add (README); bare, it is its SDK.
  const cline = { 'user-agent': 'ai-sdk/openai-compatible/3.0.37 ai-sdk/provider-utils/5.0.30 runtime/bun/1.3.13' };
  assert.equal(agentFromHeaders(cline), 'ai-sdk');
  assert.equal(agentFromHeaders({ ...cline, 'x-title': 'Cline CLI' }), 'cline-cli');
  assert.equal(ua('cline-cli/1.0'), 'cline-cli');
  assert.equal(ua('continue-cli/1.2'), 'continue-cli');
  const a = agentSessionId({ 'x-claude-code-session-id': 'c0ffee' }, 'claude-code');
  assert.match(a!, /^s[0-9a-f]{16}$/);
  assert.equal(agentSessionId({ 'x-claude-code-session-id': 'c0ffee' }, 'claude-code'), a, 'stable');
  assert.notEqual(agentSessionId({ 'x-claude-code-session-id': 'beef' }, 'claude-code'), a);
  assert.notEqual(agentSessionId({ 'x-claude-code-session-id': 'c0ffee' }, 'other'), a, 'per agent');
  assert.ok(agentSessionId({ session_id: 'x' }, 'codex'));
  assert.ok(agentSessionId({ 'x-session-affinity': 'ses_1' }, 'opencode'));
  assert.equal(agentSessionId({ 'user-agent': 'curl/8' }, 'curl'), undefined);
});

test('a request body over 1 MB is read for model and pin by a scan, not a parse; keys in it are still masked', () => {
  const filler = 'say \\"model\\": \\"not-this\\" '.repeat(60_000);
  const big = `{"messages":[{"role":"user","content":"${filler}"}],"tools":[{"parameters":{"properties":{"model":{"type":"string"}}}}],"model":"moonshotai/kimi-k2","provider":{"only":["chutes"]}}`;
  assert.ok(big.length > 1024 * 1024);
  assert.deepEqual(requestInfo(big), { model: 'moonshotai/kimi-k2', pin: ['chutes'] });
  assert.deepEqual(requestInfo(big.replace(',"provider":{"only":["chutes"]}', '')), { model: 'moonshotai/kimi-k2' });
  const withKey = big.replace('say', 'my key is sk-or-v1-0123456789abcdef0123456789abcdef and');
  assert.ok(!redactText(withKey).includes('sk-or-v1-0123456789abcdef'), 'the cheap pass still lets the key patterns run');
  assert.equal(redactText(big), big);
});

test('a path is worked out once per configuration; another configuration, or a refused path, is not taken from it', () => {
  const a = { custom: { lab: 'http://a:1/base' } };
  const b = { custom: { lab: 'http://b:2' } };
  const first = resolveRoute('/u/lab/v1/chat/completions', a);
  assert.equal(first?.upstreamUrl, 'http://a:1/base/v1/chat/completions');
  assert.equal(resolveRoute('/u/lab/v1/chat/completions', a), first, 'the same answer again');
  assert.ok(Object.isFrozen(first), 'shared answers cannot be changed by a caller');
  assert.equal(resolveRoute('/u/lab/v1/chat/completions', b)?.upstreamUrl, 'http://b:2/v1/chat/completions');
  assert.equal(resolveRoute('/u/none/v1/x', a), undefined);
  assert.equal(resolveRoute('/u/none/v1/x', a), undefined, 'no upstream, again');
  for (let i = 0; i < 2; i++) assert.throws(() => resolveRoute('/u/lab/%E0%A4%A/x', a), BadPathError, 'refused every time');
  for (let i = 0; i < 300; i++) resolveRoute(`/u/lab/v1/m?i=${i}`, a);
  assert.equal(
    resolveRoute('/u/lab/v1/m?i=299', a)?.upstreamUrl,
    'http://a:1/base/v1/m?i=299',
    'right after the cache was cleared for room',
  );
});

test('a path outside every route gets a local answer: status for / and /health, a 404 message listing the routes', () => {
  assert.equal(
    VERSION,
    JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version,
    "the version Tokenscope reports is package.json's",
  );
  const u = { custom: { lab: 'http://l' } };
  assert.deepEqual(routePrefixes(u), ['/openrouter/', '/sglang/', '/anthropic/', '/openai/', '/u/lab/', '/v1/']);
  assert.deepEqual(JSON.parse(statusBody('GET', '/health?x=1', u)!), { tokenscope: VERSION, routes: routePrefixes(u) });
  assert.ok(statusBody('HEAD', '/', u));
  assert.equal(statusBody('POST', '/', u), undefined);
  assert.equal(statusBody('GET', '/favicon.ico', u), undefined);
  const msg = noRouteMessage('/favicon.ico?secret=1', u);
  assert.match(msg, /^Tokenscope has no route for \/favicon\.ico: point the base URL at one of \/openrouter\/, .*\/u\/lab\/, \/v1\//);
  assert.ok(!msg.includes('secret'), 'the query is not echoed');
  assert.ok(noRouteMessage(`/${'x'.repeat(5000)}`).length < 600, 'a long path is cut');
});

test('an encoded climb out of the route (`..%2f`, `%2e%2e%5c`, twice encoded, `..;`) is refused; an encoded slash alone is not', () => {
  for (const p of [
    '/v1/..%2f..%2fadmin',
    '/v1/..%2F/x',
    '/u/lab/%2e%2e%2fsecret',
    '/v1/%2e%2e%5cx',
    '/v1/x/..%252f..%252fy',
    '/v1/.%2fx',
    '/v1/..;/x',
  ]) {
    assert.throws(
      () => resolveRoute(p, { custom: { lab: 'http://l' } }),
      (e: Error) => e instanceof BadPathError && /could leave the route/.test(e.message),
      p,
    );
  }
  assert.equal(resolveRoute('/v1/a%2Fb/c', {})?.upstreamPath, '/api/v1/a%2Fb/c');
  assert.equal(resolveRoute('/v1/x..y%2fz', {})?.upstreamPath, '/api/v1/x..y%2fz');
});

test('a route names its upstream with the credentials of the base URL redacted', () => {
  const r = resolveRoute('/v1/chat/completions?x=1', { default: 'http://user:pw-c4n4ry@127.0.0.1:9/api?key=c4n4ry&alt=sse' })!;
  assert.equal(r.shownBase, 'http://[REDACTED:url-userinfo]@127.0.0.1:9/api?key=[REDACTED:url-credential]&alt=sse');
  assert.equal(r.upstreamPath, '/api/v1/chat/completions?x=1&key=c4n4ry&alt=sse', 'the request still carries the key upstream');
  assert.throws(
    () => checkUpstreamUrl('ftp://u:c4n4ry@h/?token=c4n4ry', '--upstream'),
    (e: Error) => !e.message.includes('c4n4ry'),
  );
});

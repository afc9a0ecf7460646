// `tokenscope lint` end to end: the built binary (after `npm run build`) and the dispatcher in-process.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main';
import { excerpt } from '../../src/cli/commands/lint';
import { safeLine } from '../../src/cli/terminal';
import { repoRoot } from '../helpers/shared';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-lint-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

const KIMI = 'moonshotai/kimi-k2-0905';
const chat = (message: object, finish: string) =>
  JSON.stringify({ id: 'gen-1', object: 'chat.completion', model: KIMI, provider: 'Fireworks', choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', ...message } }] });

const healthy = file('healthy.json', chat({ content: 'Reading it.', tool_calls: [{ index: 0, id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '{"filePath":"src/app.ts"}' } }] }, 'tool_calls'));
const leak = file('fireworks.json', chat({ content: 'channel_reply:0<|tool_call_argument_begin|>{"text": "Posting\\nnow"}<|tool_calls_section_end|>' }, 'stop'));
const raw = file('opencode-1021.txt', "I'll look.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"filePath\":\"a\"}<|tool_call_end|>");
const requestFile = file('request.json', JSON.stringify({ model: KIMI, messages: [{ role: 'user', content: 'read it' }], tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] } } }] }));

async function lint(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['lint', ...argv], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('lint (in-process)', () => {
  test('exit 0 on a healthy response, with the tool and schema checks enabled by --request', async () => {
    const r = await lint('--request', requestFile, healthy);
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /^healthy\.json: Kimi K2 \(from the model id\), no findings$/m);
    assert.match(r.out, /^calls \(as the provider returned them, plus any leaked into content\):\n {2}0 {2}read \(id functions\.read:0\) \{"filePath":"src\/app\.ts"\} \[\d+–\d+\)$/m);
  });

  test('exit 1 on the Fireworks leak: rule, severity, message and the offending text with a caret line', async () => {
    const r = await lint(leak);
    assert.equal(r.code, 1);
    assert.match(r.out, /^error +markup-in-content +content \[\d+–\d+\)$/m);
    assert.match(r.out, /^error +finish-reason-mismatch +finish_reason$/m);
    const lines = r.out.split('\n');
    const i = lines.findIndex((l) => l.includes('<|tool_call_argument_begin|>') && l.includes('\\n'));
    assert.ok(i > 0, 'markers visible, newline escaped');
    assert.match(lines[i + 1], /^ +\^+$/);
  });

  test('--json prints the documented shape', async () => {
    const r = await lint('--json', '--model', KIMI, raw);
    assert.equal(r.code, 1);
    const j = JSON.parse(r.out) as { family: string; findings: Record<string, unknown>[] };
    assert.equal(j.family, 'kimi-k2');
    const f = j.findings.find((x) => x.rule === 'section-unclosed')!;
    assert.deepEqual(Object.keys(f).slice(0, 6), ['rule', 'severity', 'message', 'start', 'end', 'location']);
    assert.equal(f.severity, 'error');
    assert.equal(typeof f.start, 'number');
    assert.equal(f.expectedMarker, '<|tool_calls_section_end|>');
  });

  test('--family overrides the model id; unknown families, flags and files exit 2 with one line', async () => {
    assert.equal((await lint('--family', 'kimi-k2', raw)).code, 1);
    for (const argv of [['--family', 'llama9', raw], ['--frobnicate', raw], [join(dir, 'missing.json')], [], [raw, raw]]) {
      const r = await lint(...argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.equal(r.err.trim().split('\n').length, 1, r.err);
      assert.doesNotMatch(r.err, /\n\s+at /);
    }
  });
});

describe('lint: text that opens with { or [', () => {
  test('raw model text is linted, not refused as "not valid JSON"', async () => {
    for (const [name, text] of [
      ['llama.json', '{"name": "get_weather", "parameters": {"city": "Paris"}}'],
      ['mistral.txt', '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'],
      ['hermes-args.txt', '{"city": "Par'],
      ['brace.txt', '{ not json at all'],
    ]) {
      const r = await lint(file(name, text));
      assert.notEqual(r.code, 2, `${name}: ${r.err}`);
      assert.equal(r.err, '', name);
      assert.match(r.out, new RegExp(`^${name.replace('.', '\\.')}: `), name);
    }
  });

  test('a JSON response cut short is a finding about its truncated body (exit 1), not unusable input', async () => {
    const body = chat({ content: 'Reading it.' }, 'stop');
    for (const cut of [body.slice(0, 150), '{"id":"gen-1","object":"chat.compl']) {
      const r = await lint('--json', file('cut.json', cut));
      assert.equal(r.code, 1, r.err);
      const j = JSON.parse(r.out) as { findings: { rule: string; message: string }[] };
      assert.ok(j.findings.some((f) => f.rule === 'stream-unterminated' && /JSON body ends early/.test(f.message)), r.out);
    }
  });

  test('a request body given as FILE is still refused with a hint (exit 2)', async () => {
    const r = await lint(requestFile);
    assert.equal(r.code, 2);
    assert.match(r.err, /looks like a request body .*--request/);
  });
});

describe('excerpt', () => {
  test('escapes control characters and keeps the caret under the range', () => {
    const [code, caret] = excerpt('a\tb\nc<|x|>d', 6, 11);
    assert.equal(code, 'a\\tb\\nc<|x|>d');
    assert.equal(caret, '        ^^^^^');
  });

  test('counts full-width characters as two columns (DeepSeek markers, CJK text)', () => {
    const text = '好的<｜tool▁sep｜>';
    const [code, caret] = excerpt(text, 2, text.length);
    assert.ok(code.startsWith('好的<｜'));
    assert.equal(caret.indexOf('^'), 4);
  });

  test('escapes as every other command does (one formatter), and the caret stays under the range past escapes and wide characters', () => {
    // ESC, BEL, a bidi override, a full-width marker and a tab before the range: each shown as its escape or its glyph.
    const before = 'a\u001bb\u0007c｜d\u202ee\t';
    const text = `${before}<TARGET>f`;
    const [code, caret] = excerpt(text, before.length, before.length + 8);
    assert.equal(code, 'a\\eb\\u{7}c｜d\\u{202e}e\\t<TARGET>f');
    assert.equal(code, safeLine(text), 'the excerpt shows the text exactly as safeLine does');
    assert.doesNotMatch(code, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    // Columns: a 1, \e 2, b 1, \u{7} 5, c 1, ｜ 2, d 1, \u{202e} 8, e 1, \t 2 = 24.
    assert.equal(caret, `${' '.repeat(24)}^^^^^^^^`);
    const [, point] = excerpt(text, before.length, before.length);
    assert.equal(point, `${' '.repeat(24)}^`, 'an insertion point lines up the same way');
  });

  test('shortens long ranges around an ellipsis, and points at an insertion point', () => {
    const text = 'x'.repeat(50) + '<|tool_calls_section_begin|>' + 'y'.repeat(300);
    const [code] = excerpt(text, 50, text.length);
    assert.ok(code.length < 160 && code.includes(' … '));
    const [, ghost] = excerpt('abc', 3, 3);
    assert.equal(ghost, '   ^');
  });
});

describe('lint (built binary)', () => {
  const bin = join(repoRoot, 'bin', 'tokenscope.js');
  const built = join(repoRoot, 'dist', 'cli.js');
  const fresh = existsSync(built) && statSync(built).mtimeMs >= statSync(join(repoRoot, 'src/cli/commands/lint.ts')).mtimeMs;
  const run = (...argv: string[]) => spawnSync(process.execPath, [bin, 'lint', ...argv], { encoding: 'utf8', timeout: 60_000 });

  test('exit codes 0 / 1 / 2 and the JSON shape', (t) => {
    if (!fresh) return t.skip('dist/cli.js is missing or older than the lint command: run `npm run build` first');
    assert.equal(run(healthy).status, 0);
    const bad = run('--json', leak);
    assert.equal(bad.status, 1);
    const j = JSON.parse(bad.stdout) as { family: string; findings: { rule: string }[] };
    assert.equal(j.family, 'kimi-k2');
    assert.ok(j.findings.some((f) => f.rule === 'markup-in-content'));
    const missing = run(join(dir, 'nope.sse'));
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^tokenscope lint: .*no such file\n$/);
  });
});

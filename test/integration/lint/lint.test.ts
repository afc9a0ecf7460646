// `tokenscope lint` end to end: the built binary (after `npm run build`) and the dispatcher in-process.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { excerpt } from '../../../src/cli/commands/lint';
import { safeLine } from '../../../src/cli/terminal';
import { repoRoot } from '../../helpers/shared';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-lint-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

const KIMI = 'moonshotai/kimi-k2-0905';
const chat = (message: object, finish: string) =>
  JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion',
    model: KIMI,
    provider: 'Fireworks',
    choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', ...message } }],
  });

const healthy = file(
  'healthy.json',
  chat(
    {
      content: 'Reading it.',
      tool_calls: [
        { index: 0, id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '{"filePath":"src/app.ts"}' } },
      ],
    },
    'tool_calls',
  ),
);
const leak = file(
  'fireworks.json',
  chat({ content: 'channel_reply:0<|tool_call_argument_begin|>{"text": "Posting\\nnow"}<|tool_calls_section_end|>' }, 'stop'),
);
const raw = file(
  'opencode-1021.txt',
  'I\'ll look.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"filePath":"a"}<|tool_call_end|>',
);
const requestFile = file(
  'request.json',
  JSON.stringify({
    model: KIMI,
    messages: [{ role: 'user', content: 'read it' }],
    tools: [
      {
        type: 'function',
        function: { name: 'read', parameters: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] } },
      },
    ],
  }),
);

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
    assert.match(
      r.out,
      /^calls \(as the provider returned them, plus any leaked into content\):\n {2}0 {2}read \(id functions\.read:0\) \{"filePath":"src\/app\.ts"\} \[\d+–\d+\)$/m,
    );
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
      assert.ok(
        j.findings.some((f) => f.rule === 'stream-unterminated' && /JSON body ends early/.test(f.message)),
        r.out,
      );
    }
  });

  test('a request body given as FILE is still refused with a hint (exit 2)', async () => {
    const r = await lint(requestFile);
    assert.equal(r.code, 2);
    assert.match(r.err, /looks like a request body .*--request/);
  });
});

describe('lint --where: a fragment judged in the field it came from', () => {
  const leaked = 'I will read it.\n<tool_call>\n{"name": "read", "arguments": {"filePath": "a.ts"}}\n</tool_call>\n';
  const swallowed = JSON.stringify({ path: 'a.ts</arg_value>\n<arg_key>content</arg_key>\n<arg_value>export {}' });

  test('--where content: markup in the content is a leak into content, family from --model or the markers', async () => {
    const f = file('content.txt', leaked);
    for (const argv of [['--model', 'qwen/qwen3-32b'], []]) {
      const r = await lint('--where', 'content', '--json', ...argv, f);
      assert.equal(r.code, 1, r.err);
      const j = JSON.parse(r.out) as { family: string; content: string; findings: { rule: string; severity: string; location: string }[] };
      assert.equal(j.family, 'qwen3');
      assert.deepEqual(
        j.findings.map((x) => [x.rule, x.severity, x.location]),
        [['markup-in-content', 'error', 'content']],
      );
    }
    // The same text as whole raw model output (the default) is a healthy call.
    assert.equal((await lint('--model', 'qwen/qwen3-32b', f)).code, 0);
  });

  test('--where reasoning: markup in the reasoning_content', async () => {
    const r = await lint('--where', 'reasoning', '--json', '--model', 'qwen/qwen3-32b', file('reasoning.txt', leaked));
    assert.equal(r.code, 1, r.err);
    const j = JSON.parse(r.out) as { reasoning: string; findings: { rule: string }[] };
    assert.ok(j.reasoning.includes('<tool_call>'));
    assert.deepEqual(
      j.findings.map((x) => x.rule),
      ['markup-in-reasoning'],
      'no empty-response: a fragment is not the whole turn',
    );
  });

  test('--where arguments: markup inside is markup-in-tool-call, broken JSON is args-invalid-json; --tool names the call', async () => {
    const r = await lint('--where', 'arguments', '--tool', 'write_file', '--model', 'z-ai/glm-4.6', file('args.json', swallowed));
    assert.equal(r.code, 1, r.err);
    assert.match(r.out, /^args\.json \(as the arguments of a call to write_file\): GLM/m);
    assert.match(r.out, /^error +markup-in-tool-call +tool_calls\[0\]\.arguments/m);
    assert.match(r.out, /call 0 \(write_file\) hold GLM.* inside the value of "path"/);
    const bad = await lint('--where', 'arguments', '--json', file('cut-args.txt', '{"path": "a.ts", "content": "expo'));
    assert.equal(bad.code, 1, bad.err);
    assert.deepEqual(
      (JSON.parse(bad.out) as { findings: { rule: string }[] }).findings.map((x) => x.rule),
      ['args-invalid-json'],
    );
    assert.equal((await lint('--where', 'arguments', file('ok-args.json', '{"path": "a.ts"}\n'))).code, 0);
  });

  test('usage errors exit 2: an unknown field, --tool without --where arguments', async () => {
    const f = file('x.txt', 'hello');
    for (const argv of [
      ['--where', 'body', f],
      ['--tool', 'read', f],
      ['--where', 'content', '--tool', 'read', f],
    ]) {
      const r = await lint(...argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.equal(r.err.trim().split('\n').length, 1, r.err);
    }
    assert.match((await lint('--help')).out, /--where FIELD +FILE is a fragment pasted from one field/);
  });
});

describe('lint: an error inside the choice', () => {
  test("OpenRouter's choices[0].error with finish_reason error: exit 1, the provider's message shown escaped", async () => {
    const body = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion',
      model: KIMI,
      choices: [
        {
          index: 0,
          finish_reason: 'error',
          message: { role: 'assistant', content: '' },
          error: { code: 502, message: 'Upstream error from Chutes\u001b[2J overloaded', metadata: { provider_name: 'Chutes' } },
        },
      ],
    });
    const r = await lint(file('choice-error.json', body));
    assert.equal(r.code, 1, r.err);
    assert.match(r.out, /^error +upstream-error +wire$/m);
    assert.match(r.out, /finish_reason error: 502: Upstream error from Chutes\\e\[2J overloaded \(provider Chutes\)/);
    assert.doesNotMatch(r.out, /\u001b/);
  });
});

describe('lint --json: repeated findings', () => {
  test('31 unclosed openers are one finding with its 31 positions (the added "repeated" key)', async () => {
    const r = await lint('--json', '--family', 'qwen3', file('openers.txt', '<tool_call>\n'.repeat(31)));
    assert.equal(r.code, 1);
    const j = JSON.parse(r.out) as {
      findings: { rule: string; message: string; start: number; repeated?: { count: number; positions: { start: number }[] } }[];
    };
    const f = j.findings.filter((x) => x.rule === 'call-unclosed');
    assert.equal(f.length, 1);
    assert.match(f[0].message, /\(repeated 31×\)$/);
    assert.equal(f[0].repeated?.count, 31);
    assert.equal(f[0].repeated?.positions.length, 31);
    assert.equal(f[0].repeated?.positions[0].start, f[0].start);
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
    const fragment = run(
      '--where',
      'arguments',
      '--json',
      file('bin-args.json', JSON.stringify({ path: 'a.ts</arg_value><arg_key>content</arg_key><arg_value>x' })),
    );
    assert.equal(fragment.status, 1, fragment.stderr);
    assert.ok((JSON.parse(fragment.stdout) as { findings: { rule: string }[] }).findings.some((f) => f.rule === 'markup-in-tool-call'));
    const missing = run(join(dir, 'nope.sse'));
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^tokenscope lint: .*no such file\n$/);
  });
});

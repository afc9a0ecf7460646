// `tokenscope lint` on tool calls in a dialect Tokenscope has no grammar for: the text report counts the finding in its
// summary line (never "no findings"), and `--json` carries it with its range.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-dialect-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

async function lint(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['lint', ...argv], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const MODEL = 'some/unknown-model';
const request = file(
  'request.json',
  JSON.stringify({
    model: MODEL,
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ],
  }),
);

const CASES: Record<string, string> = {
  'call.txt': '<call>get_weather{"city":"Paris"}</call>',
  'tool.txt': '<tool>{"tool_name":"get_weather","tool_input":{"city":"Paris"}}</tool>',
  'react.txt': 'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city":"Paris"}',
  'fence.txt': 'Let me check.\n```json\n{"name":"get_weather","arguments":{"city":"Paris"}}\n```\n',
};

describe('lint on a call in an unknown dialect', () => {
  for (const [name, text] of Object.entries(CASES)) {
    test(`${name}: one warning, counted in the summary line, exit 0`, async () => {
      const path = file(name, text);
      for (const argv of [
        ['--model', MODEL, path],
        ['--model', MODEL, '--request', request, path],
      ]) {
        const r = await lint(...argv);
        assert.equal(r.code, 0, r.out + r.err);
        assert.equal(r.out.split('\n')[0], `${name}: family unknown, 1 warning`);
        assert.match(r.out, /^warning unknown-dialect-call {2}content \[\d+–\d+\)$/m);
        assert.match(
          r.out,
          /This looks like a tool call in a dialect Tokenscope has no grammar for \(.*calling get_weather\); a parser for this model would not deliver it as a call/,
        );
      }
    });
  }

  test('--json carries the finding with its range', async () => {
    const text = CASES['call.txt'];
    const r = await lint('--json', '--model', MODEL, file('call.txt', text));
    assert.equal(r.code, 0);
    const j = JSON.parse(r.out) as {
      family: unknown;
      findings: { rule: string; severity: string; message: string; start: number; end: number; location: string }[];
    };
    assert.equal(j.family, null);
    assert.deepEqual(
      j.findings.map((f) => [f.rule, f.severity, f.location, text.slice(f.start, f.end)]),
      [['unknown-dialect-call', 'warning', 'content', text]],
    );
  });

  test('a known family: the summary names it and still counts the warning', async () => {
    const r = await lint('--model', 'Qwen/Qwen3-8B', file('qwen.txt', CASES['tool.txt']));
    assert.equal(r.code, 0);
    assert.match(r.out.split('\n')[0], /^qwen\.txt: Qwen3 .*\(from the model id\), 1 warning$/);
    assert.match(r.out, /a parser for Qwen3 \(Hermes tool calls\) would not deliver it as a call/);
  });

  test('an HTML answer and a JSON config answer stay "no findings"', async () => {
    const html = file(
      'html.txt',
      'The new markup:\n\n```html\n<nav><button type="button" name="menu">Menu</button></nav>\n```\n\nThe <button> now has a type.',
    );
    const config = file(
      'config.txt',
      '```json\n{ "name": "weather-app", "version": "1.2.0", "scripts": { "start": "node src/index.js" } }\n```',
    );
    for (const p of [html, config]) {
      const r = await lint('--model', MODEL, '--request', request, p);
      assert.equal(r.code, 0);
      assert.match(r.out.split('\n')[0], /: family unknown, no findings$/);
    }
  });
});

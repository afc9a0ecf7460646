import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { turnReport } from '../../../src/core/parsed';
import { prepare } from '../../../src/core/analyze';
import { families } from '../../../src/core/families/index';
import { prng } from '../../helpers/prng';
import type { NormalizedRequest, ToolDef } from '../../../src/core/model';
import { response } from './helpers';

const request = (tools: ToolDef[]): NormalizedRequest => ({
  protocol: 'openai-chat',
  model: 'acme/zeta-7b',
  tools,
  messages: [{ role: 'user', content: 'hi' }],
  raw: {},
});

const ZETA = 'Let me check.<|zeta_call|>{"name": "get_weather", "arguments": {"city": "Rome"}}<|/zeta_call|>';

describe('no silent all-clear on a dialect Tokenscope does not know', () => {
  test('an invented dialect from an unknown model: family unknown, and an error that names what was seen', () => {
    // Before: read as Qwen3 from the `"name": …, "arguments"` shape, with no findings.
    const a = analyze({ nativeText: ZETA, model: 'acme/zeta-7b' });
    assert.equal(a.family, undefined);
    assert.equal(a.familySource, 'none');
    const f = a.findings.filter((x) => x.rule === 'markup-in-content');
    assert.equal(f.length, 1, JSON.stringify(a.findings));
    assert.equal(f[0].severity, 'error');
    assert.match(f[0].message, /Unknown dialect: tool-call markup/);
    assert.match(f[0].message, /<\|zeta_call\|>, <\|\/zeta_call\|>/);
    assert.equal(ZETA.slice(f[0].start, f[0].end), ZETA.slice(ZETA.indexOf('<|zeta')));
  });

  test('the machine-readable report says the family is unknown', () => {
    const { ctx, familySource, message } = prepare({ nativeText: ZETA });
    const report = turnReport({ family: undefined, familySource, native: ctx.native, message, findings: [] }, ctx);
    assert.equal(report.family, null);
    assert.equal(report.familySource, 'unknown');
  });

  test('the same markup in the content of a structured response whose request offered tools is an error; without tools a warning', () => {
    const leak = response({ model: 'acme/zeta-7b', message: { content: 'Sure <acme|tool_call>lookup<acme|sep>x' } });
    const withTools = analyze({ response: leak, request: request([{ name: 'lookup' }]) });
    const e = withTools.findings.find((x) => x.rule === 'markup-in-content');
    assert.equal(e?.severity, 'error');
    const noTools = analyze({ response: leak, request: request([]) });
    assert.equal(noTools.findings.find((x) => x.rule === 'markup-in-content')?.severity, 'warning');
  });

  test('each special-token shape is seen, in content and in reasoning', () => {
    for (const m of ['<|act|>', '<｜act｜>', '<ifm|tool_call>', '<|tool_use>', '<tool_use|>', '[TOOL_USE]', '[/TOOL_USE]']) {
      const r = response({ model: 'acme/x', message: { reasoning: `thinking ${m} {"name":"a"}`, content: `done ${m}` } });
      const a = analyze({ response: r, request: request([{ name: 'a' }]) });
      assert.ok(
        a.findings.some((f) => f.rule === 'markup-in-reasoning'),
        `${m} in reasoning`,
      );
      assert.ok(
        a.findings.some((f) => f.rule === 'markup-in-content'),
        `${m} in content`,
      );
    }
  });

  test('plain prose, HTML, XML, markdown and code of an unknown model stay clean', () => {
    const texts = [
      'Here is the table:\n\n| a | b |\n|---|---|\n| 1 | 2 |',
      'Use <div class="x">hi</div> and <b>bold</b> in your docs; see [TODO], [NOTE] and [x](http://a.b).',
      'In Haskell, `a <|> b` tries a then b; in F#, `x |> f` pipes. Bitwise: a | b > c.',
      '{"name": "get_weather", "arguments": {"city": "Rome"}} is the JSON you would send.',
    ];
    for (const t of texts) {
      const a = analyze({ nativeText: t, model: 'acme/zeta-7b' });
      assert.deepEqual(
        a.findings.filter((f) => f.severity !== 'info'),
        [],
        t,
      );
    }
  });

  test('a family is chosen from markers only when the text holds one of its own', () => {
    // A JSON call between unknown markers is no Qwen3 or Hermes call.
    assert.equal(analyze({ nativeText: ZETA }).family, undefined);
    // Llama 3's bare JSON call needs no marker of its own.
    assert.equal(analyze({ nativeText: '{"name": "get_weather", "parameters": {"city": "Rome"}}' }).family, 'llama3-json');
    // Qwen3 from its own markers.
    assert.equal(analyze({ nativeText: '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>' }).family !== undefined, true);
  });
});

/** Words and punctuation of ordinary prose and code, with no markup of any family. */
const WORDS = [
  'the',
  'file',
  'read',
  'call',
  'tool',
  'function',
  'name',
  'arguments',
  'I',
  'will',
  'now',
  'check',
  'weather',
  'in',
  'Rome',
  '日本語',
  'café',
  '🎉',
  'if',
  '(x)',
  '{',
  '}',
  '[',
  ']',
  '=',
  '==',
  '<',
  '>',
  '|',
  '"',
  "'",
  ':',
  ';',
  ',',
  '.',
  '\n',
  '\n\n',
  '  ',
  '->',
  '=>',
  '#',
  '*',
  '-',
  '1',
  '42',
  'null',
  'true',
];

describe('property: random prose with no markup is never flagged, for any family', () => {
  test('2,000 random texts × every family: no error or warning', () => {
    const rand = prng(0x7ea5);
    const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
    for (let i = 0; i < 2000; i++) {
      const n = 1 + Math.floor(rand() * 40);
      const text =
        Array.from({ length: n }, pick)
          .join(rand() < 0.5 ? ' ' : '')
          .trim() || 'ok';
      const family = families[i % families.length];
      // The family's own opener would be markup: prose holds none of its markers.
      if (family.format.markers.some((m) => text.includes(m)) || family.repair.openers.some((m) => text.includes(m))) continue;
      const r = response({ model: 'acme/none', message: { content: text } });
      for (const a of [
        analyze({ response: r, family: family.id }),
        analyze({ nativeText: text, family: family.id }),
        analyze({ nativeText: text }),
      ]) {
        const bad = a.findings.filter((f) => f.severity !== 'info');
        assert.deepEqual(bad, [], `seed 0x7ea5 #${i} ${family.id}: ${JSON.stringify(text)}`);
      }
    }
  });
});

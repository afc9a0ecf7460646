import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';
import { assertProblems, assertSegments, codes, slices } from './helpers';

function parse(id: FamilyId, text: string) {
  const p = getFormat(id).parse(text);
  assertSegments(text, p.segments);
  assertProblems(p);
  return p;
}

// ---- DeepSeek -------------------------------------------------------------------------------------------

const DS = {
  SB: '<｜tool▁calls▁begin｜>',
  SE: '<｜tool▁calls▁end｜>',
  CB: '<｜tool▁call▁begin｜>',
  CE: '<｜tool▁call▁end｜>',
  SEP: '<｜tool▁sep｜>',
  EOS: '<｜end▁of▁sentence｜>',
};

test('deepseek-v3: healthy fenced calls (calls separated by a newline), R1 reasoning', () => {
  const text = `<think>\nRead two files.\n</think>\n\nSure.${DS.SB}${DS.CB}function${DS.SEP}read\n\`\`\`json\n{"path": "a"}\n\`\`\`${DS.CE}\n${DS.CB}function${DS.SEP}read\n\`\`\`json\n{"path": "b"}\n\`\`\`${DS.CE}${DS.SE}${DS.EOS}`;
  const p = parse('deepseek-v3', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'Read two files.',
    content: 'Sure.',
    toolCalls: [
      { index: 0, name: 'read', arguments: '{"path": "a"}' },
      { index: 1, name: 'read', arguments: '{"path": "b"}' },
    ],
  });
  assert.deepEqual(slices(p, 'end'), [DS.EOS]);
});

test('deepseek-v3: truncated inside the closing fence and missing the type', () => {
  let p = parse('deepseek-v3', `${DS.SB}${DS.CB}function${DS.SEP}read\n\`\`\`json\n{"path": "a"}\n\`\``);
  assert.deepEqual(codes(p).sort(), ['call-unclosed', 'marker-truncated', 'section-unclosed']);
  assert.equal(p.message.toolCalls[0].arguments, '{"path": "a"}');
  assert.equal(p.problems.find((x) => x.code === 'call-unclosed')?.marker, '```');
  p = parse('deepseek-v3', `${DS.SB}${DS.CB}read${DS.SEP}{"path": "a"}${DS.CE}${DS.SE}`);
  assert.deepEqual(codes(p), ['malformed-call']);
});

test('deepseek-v31: healthy, and a V3.1 thinking completion that starts inside <think>', () => {
  const text = `The user wants a file.</think>On it.${DS.SB}${DS.CB}read${DS.SEP}{"path": "日本.md"}${DS.CE}${DS.SE}${DS.EOS}`;
  const p = parse('deepseek-v31', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'The user wants a file.',
    content: 'On it.',
    toolCalls: [{ index: 0, name: 'read', arguments: '{"path": "日本.md"}' }],
  });
});

test('deepseek-v31: truncated last call is kept; cut-short section end', () => {
  let p = parse('deepseek-v31', `${DS.SB}${DS.CB}read${DS.SEP}{"path": "a"}${DS.CE}${DS.CB}read${DS.SEP}{"path": "b`);
  assert.deepEqual(codes(p), ['section-unclosed', 'call-unclosed']);
  assert.equal(p.message.toolCalls.length, 2);
  assert.equal(p.message.toolCalls[1].arguments, '{"path": "b');
  const text = `${DS.SB}${DS.CB}read${DS.SEP}{}${DS.CE}<｜tool▁calls▁end｜`;
  p = parse('deepseek-v31', text);
  assert.deepEqual(codes(p), ['section-unclosed', 'marker-truncated']);
  assert.equal(p.problems[0].expectedAt, text.lastIndexOf('<'));
});

test('deepseek: leaked markup in content is flagged', () => {
  const p = parse('deepseek-v31', `Here you go${DS.CE} done`);
  assert.deepEqual(codes(p), ['stray-marker']);
});

// ---- Qwen3 (Hermes) -------------------------------------------------------------------------------------

test('qwen3: healthy Hermes calls after thinking and content', () => {
  const text =
    '<think>\nNeed the weather.\n</think>\n\nChecking.\n<tool_call>\n{"name": "weather", "arguments": {"location": "Florence,Italy"}}\n</tool_call>\n<tool_call>\n{"name": "time", "arguments": {}}\n</tool_call><|im_end|>';
  const p = parse('qwen3', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'Need the weather.',
    content: 'Checking.',
    toolCalls: [
      { index: 0, name: 'weather', arguments: '{"location": "Florence,Italy"}' },
      { index: 1, name: 'time', arguments: '{}' },
    ],
  });
  assert.deepEqual(slices(p, 'call-name'), ['weather', 'time']);
});

test('qwen3: truncated final call (vLLM tolerates it, SGLang drops it) is kept and flagged', () => {
  const p = parse('qwen3', '<tool_call>\n{"name": "read", "arguments": {"path": "src/ma');
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.equal(p.problems[0].marker, '</tool_call>');
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'read', arguments: '{"path": "src/ma' }]);
});

test('qwen3: broken object around sound arguments, and a body that is not JSON', () => {
  let p = parse('qwen3', '<tool_call>\n{"name": "read", "arguments": {"path": "a"}\n</tool_call>');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.equal(p.message.toolCalls[0].arguments, '{"path": "a"}');
  p = parse('qwen3', '<tool_call>\n<function=ls>\n</function>\n</tool_call>');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.equal(p.message.toolCalls[0].name, '');
});

test('qwen3: invalid JSON arguments are passed through for the checks to judge', () => {
  const p = parse('qwen3', '<tool_call>\n{"name": "read", "arguments": {"path": a.ts}}\n</tool_call>');
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.toolCalls[0].arguments, '{"path": a.ts}');
});

// ---- Qwen3-Coder ----------------------------------------------------------------------------------------

test('qwen3-coder: healthy XML call; values typed canonically', () => {
  const text =
    'Listing.\n<tool_call>\n<function=ls>\n<parameter=dirPath>\nsrc/app\n</parameter>\n<parameter=depth>\n2\n</parameter>\n<parameter=opts>\n{"hidden": true}\n</parameter>\n</function>\n</tool_call><|im_end|>';
  const p = parse('qwen3-coder', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    content: 'Listing.',
    toolCalls: [{ index: 0, name: 'ls', arguments: '{"dirPath":"src/app","depth":2,"opts":{"hidden":true}}' }],
  });
});

test('qwen3-coder: Continue #11453, <tool_call><function=ls><parameter=dirPath>src cut off', () => {
  const text = '<tool_call><function=ls><parameter=dirPath>src';
  const p = parse('qwen3-coder', text);
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.equal(p.problems[0].marker, '</parameter>');
  assert.equal(p.problems[0].expectedAt, text.length);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'ls', arguments: '{"dirPath":"src"}' }]);
});

test('qwen3-coder: missing </function>, cut-short </tool_call, and <function= without <tool_call>', () => {
  let p = parse('qwen3-coder', '<tool_call>\n<function=ls>\n<parameter=dirPath>\nsrc\n</parameter>\n</tool_call>');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /no <\/function>/);
  p = parse('qwen3-coder', '<tool_call>\n<function=ls>\n</function>\n</tool_ca');
  assert.deepEqual(codes(p), ['call-unclosed', 'marker-truncated']);
  p = parse('qwen3-coder', '<function=ls>\n<parameter=dirPath>\nsrc\n</parameter>\n</function>');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.equal(p.message.toolCalls[0].arguments, '{"dirPath":"src"}');
});

// ---- GLM ------------------------------------------------------------------------------------------------

test('glm45: healthy GLM-4.5 call after thinking', () => {
  const text =
    '<think>Find the config.</think>\nLooking.\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>config/app.json</arg_value>\n<arg_key>lines</arg_key>\n<arg_value>[1, 20]</arg_value>\n</tool_call><|observation|>';
  const p = parse('glm45', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'Find the config.',
    content: 'Looking.',
    toolCalls: [{ index: 0, name: 'read', arguments: '{"path":"config/app.json","lines":[1,20]}' }],
  });
  assert.deepEqual(slices(p, 'end'), ['<|observation|>']);
});

test('glm45: GLM-4.7 without newlines, literal \\n escapes, and the GLM-4.5-Air spaced form', () => {
  let p = parse('glm45', '<tool_call>read<arg_key>path</arg_key><arg_value>a.ts</arg_value></tool_call>');
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.toolCalls[0].arguments, '{"path":"a.ts"}');
  p = parse('glm45', '<tool_call>read\\n<arg_key>path</arg_key>\\n<arg_value>a.ts</arg_value>\\n</tool_call>');
  assert.equal(p.message.toolCalls[0].name, 'read');
  assert.equal(p.message.toolCalls[0].arguments, '{"path":"a.ts"}');
  p = parse('glm45', 'Let me search: <tool_call>ls <arg_key>dirPath</arg_key> <arg_value>backend</arg_value> </tool_call>');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, { content: 'Let me search:', toolCalls: [{ index: 0, name: 'ls', arguments: '{"dirPath":"backend"}' }] });
});

test('glm45: a call cut off inside a value keeps it', () => {
  const p = parse('glm45', '<tool_call>write\n<arg_key>content</arg_key>\n<arg_value>Hello, wor');
  assert.deepEqual(codes(p), ['call-unclosed']);
  assert.equal(p.problems[0].marker, '</arg_value>');
  assert.equal(p.message.toolCalls[0].arguments, '{"content":"Hello, wor"}');
});

test('glm45: GLM XML leaked into structured arguments (Zhipu Anthropic endpoint) is visible through toolMarkers', () => {
  const leaked = '{"path": "a.ts"}</arg_value>\n<arg_key>mode</arg_key>\n<arg_value>r</arg_value>\n</tool_call>';
  const f = getFormat('glm45');
  assert.deepEqual(
    f.toolMarkers.filter((m) => leaked.includes(m)).sort(),
    ['</arg_key>', '</arg_value>', '</tool_call>', '<arg_key>', '<arg_value>'].sort(),
  );
  // Rendered back into native text, the leak shows up as markup the grammar does not expect.
  const p = parse('glm45', f.render({ toolCalls: [{ index: 0, name: 'read', arguments: leaked }] }).text);
  assert.deepEqual(codes(p), ['malformed-call', 'stray-marker']);
  assert.equal(p.problems[1].marker, '</tool_call>');
});

// ---- gpt-oss (Harmony) ----------------------------------------------------------------------------------

test('gpt-oss: healthy analysis + call, recipient in the channel part', () => {
  const text =
    '<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.weather <|constrain|>json<|message|>{"location":"Florence,Italy"}<|call|>';
  const p = parse('gpt-oss', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'Need the weather.',
    toolCalls: [{ index: 0, name: 'weather', arguments: '{"location":"Florence,Italy"}' }],
  });
});

test('gpt-oss: recipient in the role part, no <|constrain|>; a final answer', () => {
  let p = parse('gpt-oss', '<|start|>assistant to=functions.read<|channel|>commentary json<|message|>{"path":"a"}<|call|>');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'read', arguments: '{"path":"a"}' }]);
  p = parse('gpt-oss', '<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>');
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, { reasoning: 'Easy.', content: '4', toolCalls: [] });
  assert.deepEqual(slices(p, 'end'), ['<|return|>']);
});

test('gpt-oss: Kilo #1775 leak, <|channel|>commentary to=read_file <|constrain|>json<|message|>{...}', () => {
  const text = '<|channel|>commentary to=read_file <|constrain|>json<|message|>{"path":"src/app.ts"}';
  const p = parse('gpt-oss', text);
  assert.deepEqual(codes(p), ['call-unclosed', 'malformed-call']);
  assert.match(p.problems[1].message, /not in the functions\. namespace/);
  assert.equal(p.problems[0].marker, '<|call|>');
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'read_file', arguments: '{"path":"src/app.ts"}' }]);
});

test('gpt-oss: cut off in the analysis, in a header, and inside <|call|>', () => {
  let p = parse('gpt-oss', '<|channel|>analysis<|message|>Let me th');
  assert.deepEqual(codes(p), ['reasoning-unclosed']);
  assert.equal(p.problems[0].marker, '<|end|>');
  p = parse('gpt-oss', '<|start|>assistant<|channel|>commentary to=functions.read <|constr');
  assert.deepEqual(codes(p), ['call-unclosed', 'marker-truncated']);
  assert.equal(p.message.toolCalls[0].name, 'read');
  p = parse('gpt-oss', '<|channel|>commentary to=functions.read <|constrain|>json<|message|>{"path":"a"}<|ca');
  assert.deepEqual(codes(p), ['call-unclosed', 'marker-truncated']);
  assert.equal(p.message.toolCalls[0].arguments, '{"path":"a"}');
});

// ---- MiniMax-M2 -----------------------------------------------------------------------------------------

test('minimax-m2: healthy section with two invokes', () => {
  const text =
    '<think>\nTwo lookups.\n</think>\n\nOn it.\n<minimax:tool_call>\n<invoke name="read">\n<parameter name="path">a.ts</parameter>\n</invoke>\n<invoke name="search">\n<parameter name="q">naïve café</parameter>\n<parameter name="limit">5</parameter>\n</invoke>\n</minimax:tool_call>[e~[';
  const p = parse('minimax-m2', text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    reasoning: 'Two lookups.',
    content: 'On it.',
    toolCalls: [
      { index: 0, name: 'read', arguments: '{"path":"a.ts"}' },
      { index: 1, name: 'search', arguments: '{"q":"naïve café","limit":5}' },
    ],
  });
});

test('minimax-m2: truncated inside a parameter, and a section never closed', () => {
  let p = parse('minimax-m2', '<minimax:tool_call>\n<invoke name="ls">\n<parameter name="dir">sr');
  assert.deepEqual(codes(p), ['section-unclosed', 'call-unclosed']);
  assert.equal(p.message.toolCalls[0].arguments, '{"dir":"sr"}');
  const text = '<minimax:tool_call>\n<invoke name="ls">\n</invoke>\n[e~[';
  p = parse('minimax-m2', text);
  assert.deepEqual(codes(p), ['section-unclosed']);
  assert.equal(p.problems[0].expectedAt, text.indexOf('</invoke>') + '</invoke>'.length);
  assert.equal(p.problems[0].marker, '</minimax:tool_call>');
});

test('minimax-m2: an invoke outside any section is recovered and flagged', () => {
  const p = parse('minimax-m2', 'x <invoke name="ls">\n<parameter name="dir">src</parameter>\n</invoke>');
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.deepEqual(p.message, { content: 'x', toolCalls: [{ index: 0, name: 'ls', arguments: '{"dir":"src"}' }] });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kimi } from '../../../src/core/families/kimi-k2/grammar';
import { assertProblems, assertSegments, codes, slices } from './helpers';

const SB = '<|tool_calls_section_begin|>';
const SE = '<|tool_calls_section_end|>';
const CB = '<|tool_call_begin|>';
const AB = '<|tool_call_argument_begin|>';
const CE = '<|tool_call_end|>';
const END = '<|im_end|>';

function parse(text: string) {
  const p = kimi.parse(text);
  assertSegments(text, p.segments);
  assertProblems(p);
  return p;
}

test('healthy K2 turn: content, two calls, section end, <|im_end|>; no problems', () => {
  const text = `I'll read both.${SB}${CB}functions.read:0${AB}{"path": "a.ts"}${CE}${CB}functions.read:1${AB}{"path": "b.ts"}${CE}${SE}${END}`;
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    content: "I'll read both.",
    toolCalls: [
      { index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path": "a.ts"}' },
      { index: 1, id: 'functions.read:1', name: 'read', arguments: '{"path": "b.ts"}' },
    ],
  });
  assert.deepEqual(slices(p, 'section'), [text.slice(text.indexOf(SB), text.indexOf(END))]);
  assert.deepEqual(slices(p, 'end'), [END]);
});

test('K2.5 completion that starts inside <think> (the prompt ended with it)', () => {
  const p = parse(`The user wants a file.</think>Reading it.${SB}${CB}functions.read:0${AB}{}${CE}${SE}`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.reasoning, 'The user wants a file.');
  assert.equal(p.message.content, 'Reading it.');
  assert.deepEqual(slices(p, 'marker'), ['</think>']);
});

test('without </think> a completion is content, even for thinking models', () => {
  const p = parse('Just an answer.');
  assert.deepEqual(p.message, { content: 'Just an answer.', toolCalls: [] });
  assert.deepEqual(p.problems, []);
});

test('OpenCode #1021 / K2VV: the section is never closed; the end is expected right after the last call', () => {
  const text = `Checking.${SB}${CB}functions.bash:0${AB}{"command": "ls"}${CE}${END}`;
  const p = parse(text);
  assert.deepEqual(codes(p), ['section-unclosed']);
  const [pr] = p.problems;
  assert.equal(pr.marker, SE);
  assert.equal(pr.expectedAt, text.indexOf(END));
  assert.equal(pr.start, text.indexOf(SB));
  // The call itself is whole and recovered.
  assert.deepEqual(p.message.toolCalls, [{ index: 0, id: 'functions.bash:0', name: 'bash', arguments: '{"command": "ls"}' }]);
  assert.deepEqual(slices(p, 'end'), [END]);
});

test('section unclosed at the very end of the text expects its end after the last call', () => {
  const text = `${SB}${CB}functions.ls:0${AB}{}${CE}  `;
  const p = parse(text);
  assert.deepEqual(codes(p), ['section-unclosed']);
  assert.equal(p.problems[0].expectedAt, text.length - 2);
});

test('OpenCode #8851: calls inside unclosed thinking, ending with a cut-short <|tool_calls_section_end|', () => {
  const text = `<think>I should read the config. ${SB}${CB}functions.read:0${AB}{"filePath": "/repo/opencode.json"}${CE}<|tool_calls_section_end|`;
  const p = parse(text);
  assert.deepEqual(codes(p), ['reasoning-unclosed', 'section-unclosed', 'marker-truncated']);
  const [reasoning, section, cut] = p.problems;
  assert.equal(reasoning.marker, '</think>');
  assert.equal(reasoning.expectedAt, text.indexOf(SB) - 1);
  assert.equal(cut.marker, SE);
  assert.equal(text.slice(cut.start, cut.end), '<|tool_calls_section_end|');
  assert.equal(cut.end, text.length);
  assert.equal(section.expectedAt, cut.start);
  assert.equal(p.message.reasoning, 'I should read the config.');
  assert.equal(p.message.toolCalls[0].name, 'read');
  assert.equal(p.message.toolCalls[0].arguments, '{"filePath": "/repo/opencode.json"}');
});

test('K2 Thinking: calls inside the think block, </think> only after them: the section is reasoning, not its end', () => {
  const text = `<think>Read it. ${SB}${CB}functions.read:0${AB}{"path": "a"}${CE}${SE}</think>Done.${END}`;
  const p = parse(text);
  // The markup stays in the reasoning text (markup-in-reasoning reports it); the reasoning ends at </think>.
  assert.deepEqual(codes(p), []);
  assert.equal(p.message.reasoning, `Read it. ${SB}${CB}functions.read:0${AB}{"path": "a"}${CE}${SE}`);
  assert.equal(p.message.content, 'Done.');
  assert.equal(p.message.toolCalls.length, 0);
});

test('a cut-short section end followed by more text is still found', () => {
  const text = `${SB}${CB}functions.ls:0${AB}{}${CE}<|tool_calls_section_end|\n${END}`;
  const p = parse(text);
  assert.deepEqual(codes(p), ['section-unclosed', 'marker-truncated']);
  assert.equal(p.problems[1].marker, SE);
  assert.deepEqual(slices(p, 'end'), [END]);
});

test('a call cut off mid-arguments is kept with what arrived', () => {
  const text = `${SB}${CB}functions.write:0${AB}{"path": "a.md", "content": "# Ti`;
  const p = parse(text);
  assert.deepEqual(codes(p), ['section-unclosed', 'call-unclosed']);
  assert.equal(p.problems[1].expectedAt, text.length);
  assert.equal(p.problems[1].marker, CE);
  assert.deepEqual(p.message.toolCalls, [
    { index: 0, id: 'functions.write:0', name: 'write', arguments: '{"path": "a.md", "content": "# Ti' },
  ]);
});

test('a call cut off inside its id, and inside a marker', () => {
  let p = parse(`${SB}${CB}functions.rea`);
  assert.deepEqual(codes(p), ['section-unclosed', 'call-unclosed']);
  assert.equal(p.message.toolCalls[0].name, 'rea');
  p = parse(`${SB}${CB}functions.read:0<|tool_call_argu`);
  assert.deepEqual(codes(p).sort(), ['call-unclosed', 'marker-truncated', 'section-unclosed']);
  assert.equal(p.problems.find((x) => x.code === 'marker-truncated')?.marker, AB);
  p = parse(`${SB}${CB}functions.read:0${AB}{"a": 1}<|tool_call_en`);
  const cut = p.problems.find((x) => x.code === 'marker-truncated');
  assert.equal(cut?.marker, CE);
  assert.equal(p.problems.find((x) => x.code === 'call-unclosed')?.expectedAt, cut?.start);
  assert.equal(p.message.toolCalls[0].arguments, '{"a": 1}');
});

test('Fireworks leak: channel_reply:0 with no section begin, no call begin, no functions. prefix', () => {
  const text = 'channel_reply:0<|tool_call_argument_begin|>{"text": "Hello there"}<|tool_calls_section_end|>';
  const p = parse(text);
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /no tool-call section begin/);
  assert.match(p.problems[0].message, /no <\|tool_call_begin\|>/);
  assert.match(p.problems[0].message, /lacks the functions\. prefix/);
  assert.deepEqual(p.message, {
    toolCalls: [{ index: 0, id: 'channel_reply:0', name: 'channel_reply', arguments: '{"text": "Hello there"}' }],
  });
  assert.deepEqual(slices(p, 'call-id', 0), ['channel_reply:0']);
  assert.deepEqual(slices(p, 'section'), [text]);
});

test('Fireworks leak after prose keeps the prose as content', () => {
  const p = parse('Sending now. channel_reply:0<|tool_call_argument_begin|>{"text": "hi"}<|tool_calls_section_end|>');
  assert.equal(p.message.content, 'Sending now.');
  assert.equal(p.message.toolCalls[0].id, 'channel_reply:0');
});

test('OpenCode #37297: markers quoted inside the JSON arguments stay in the arguments', () => {
  const inner = `/repo/app ${SB} ${CB} functions.read:3 ${AB} {\\"filePath\\": \\"/repo/x\\"} ${CE} ${SE}`;
  const args = `{"filePath": "${inner}"}`;
  const text = `${SB}${CB}functions.read:0${AB}${args}${CE}${SE}${END}`;
  const p = parse(text);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.toolCalls.length, 1);
  assert.equal(p.message.toolCalls[0].arguments, args);
  assert.ok(
    kimi.toolMarkers.some((m) => p.message.toolCalls[0].arguments.includes(m)),
    'the leak is visible to checks',
  );
});

test('the singular <|tool_call_section_begin|> variant is accepted', () => {
  const p = parse(`<|tool_call_section_begin|>${CB}functions.ls:0${AB}{}${CE}<|tool_call_section_end|>`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.toolCalls[0].name, 'ls');
});

test('stray markers in content are flagged and split the content segments', () => {
  const text = `Done.${SE}${CE} Bye.${END}`;
  const p = parse(text);
  assert.deepEqual(codes(p), ['stray-marker', 'stray-marker']);
  assert.deepEqual(slices(p, 'content'), ['Done.', 'Bye.']);
  assert.deepEqual(slices(p, 'marker'), [SE, CE]);
  // The message keeps the content as the agent would receive it.
  assert.equal(p.message.content, `Done.${SE}${CE} Bye.`);
});

test('a call outside any section, and text between calls', () => {
  let p = parse(`${CB}functions.ls:0${AB}{}${CE}`);
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.match(p.problems[0].message, /no tool-call section begin/);
  p = parse(`${SB}oops${CB}functions.ls:0${AB}{}${CE}${SE}`);
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.equal(p.text.slice(p.problems[0].start, p.problems[0].end), 'oops');
  assert.equal(p.message.toolCalls.length, 1);
});

test('off-distribution ids keep their text; the name is read as well as it can be', () => {
  const p = parse(`${SB}${CB}functions_read_3${AB}{}${CE}${CB}functions.a.b:12${AB}{}${CE}${SE}`);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(
    p.message.toolCalls.map((c) => [c.id, c.name]),
    [
      ['functions_read_3', 'functions_read_3'],
      ['functions.a.b:12', 'a.b'],
    ],
  );
});

test('an empty turn after thinking (Kimi-K2#128: empty <|im_end|> right after </think>)', () => {
  const p = parse(`<think>Next step.</think>${END}`);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, { reasoning: 'Next step.', toolCalls: [] });
});

test('<thinking> in prose is not a broken <think>', () => {
  const p = parse('Use <thinking> tags and a </thinking> close.');
  assert.deepEqual(p.problems, []);
});

test('detectText scores Kimi markup, not plain text', () => {
  assert.ok(kimi.detectText(`${SB}${CB}functions.ls:0${AB}{}`) > 20);
  assert.equal(kimi.detectText('hello'), 0);
});

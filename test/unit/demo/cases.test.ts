/** The demo's cases and its agent scenario: real Kimi K2 markup, and answers a real agent can finish a turn with. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyze } from '../../../src/core/analyze';
import { DEMO_CASES, agentScript, kimiCallMarkup, scriptMessage } from '../../../src/core/demo/cases';
import { isDemoCapture } from '../../../src/core/demo/index';
import { getFormat } from '../../../src/core/families/index';

const kimi = getFormat('kimi-k2');

test('the call markup is what the Kimi K2 format parses back as one call, from section begin to section end', () => {
  const markup = kimiCallMarkup([{ index: 0, id: 'functions.read:0', name: 'read', arguments: '{"path": "README.md"}' }]);
  assert.ok(markup.startsWith('<|tool_calls_section_begin|>'), markup);
  assert.ok(markup.endsWith(kimi.sectionEnd!), markup);
  const parsed = kimi.parse(markup);
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(
    parsed.message.toolCalls.map((c) => [c.name, c.arguments]),
    [['read', '{"path": "README.md"}']],
  );
});

test('each demo case, analysed as its structured turn, has its expected rules', () => {
  for (const c of DEMO_CASES) {
    const m = scriptMessage(c.script);
    const response = {
      protocol: 'openai-chat' as const,
      streamed: true,
      message: m,
      finishReason: c.script.finishReason,
      model: 'moonshotai/kimi-k2-0905',
      terminated: true,
      events: [],
      wireIssues: [],
    };
    const rules = [...new Set(analyze({ response }).findings.map((f) => f.rule))].sort();
    assert.deepEqual(rules, [...c.expectedRules].sort(), c.id);
  }
});

test('the agent scenario: the section without its end for a turn with tools, prose after a tool result or without tools', () => {
  const tools = [
    { type: 'function', function: { name: 'bash', parameters: { properties: { command: { type: 'string' } }, required: ['command'] } } },
    {
      type: 'function',
      function: {
        name: 'read',
        parameters: { properties: { filePath: { type: 'string' }, offset: { type: 'number' } }, required: ['filePath'] },
      },
    },
  ];
  const turn = scriptMessage(agentScript({ messages: [{ role: 'user' }], tools }));
  assert.equal(turn.toolCalls.length, 0, 'no structured call: it leaks into content');
  const parsed = kimi.parse(turn.content!);
  assert.deepEqual(
    parsed.message.toolCalls.map((c) => [c.id, c.name, JSON.parse(c.arguments)]),
    [['functions.read:0', 'read', { filePath: 'README.md' }]],
  );
  assert.ok(
    parsed.problems.some((p) => p.code === 'section-unclosed'),
    JSON.stringify(parsed.problems),
  );

  const numbered = scriptMessage(
    agentScript({ messages: [{ role: 'user' }, { role: 'assistant', tool_calls: [{}, {}] }, { role: 'user' }], tools }),
  );
  assert.match(numbered.content!, /functions\.read:2/, 'Kimi numbers calls across the conversation');

  const after = scriptMessage(agentScript({ messages: [{ role: 'user' }, { role: 'tool' }], tools }));
  assert.doesNotMatch(after.content!, /<\|/);
  assert.ok(after.content!.length > 0);
  const none = scriptMessage(agentScript({ messages: [{ role: 'user' }] }));
  assert.doesNotMatch(none.content!, /<\|/);
});

test('a demo capture is told by its route or its provider, nothing else', () => {
  assert.equal(isDemoCapture({ route: 'demo' }), true);
  assert.equal(isDemoCapture({ route: 'default', servedProvider: 'Demo (local)' }), true);
  assert.equal(isDemoCapture({ route: 'openrouter', servedProvider: 'Chutes' }), false);
  assert.equal(isDemoCapture({ route: 'u' }), false);
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import markupInContent from '../../../src/core/checks/markup-in-content';
import markupInReasoning from '../../../src/core/checks/markup-in-reasoning';
import specialTokenInText from '../../../src/core/checks/special-token-in-text';
import markupInToolCall from '../../../src/core/checks/markup-in-tool-call';
import { formats } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';
import { FIREWORKS_LEAK, K, OPENCODE_37297_ARGS, OPENCODE_8851_REASONING, call, kimiSection, response, run, slice } from './helpers';

const has = (id: FamilyId) => formats.some((f) => f.id === id);

describe('markup-in-content', () => {
  test('the Fireworks leak in content, finish stop: error naming the markers and the recovered call', () => {
    const r = run(markupInContent, { response: response({ message: { content: FIREWORKS_LEAK }, finishReason: 'stop' }) });
    assert.equal(r.findings.length, 1);
    const [f] = r.findings;
    assert.equal(f.severity, 'error');
    assert.equal(f.location, 'content');
    assert.match(f.message, /<\|tool_call_argument_begin\|>/);
    assert.match(f.message, /1 call: channel_reply \(id channel_reply:0\)/);
    assert.ok(slice(r, f).startsWith(K.ARG_BEGIN) && slice(r, f).endsWith(K.SECTION_END));
  });

  test('a whole healthy section returned as content (hermes-agent #24534) recovers the call', () => {
    const r = run(markupInContent, {
      response: response({ message: { content: `Let me check.\n${kimiSection('bash', '{"command":"ls"}')}` } }),
    });
    assert.equal(r.findings.length, 1);
    assert.match(r.findings[0].message, /1 call: bash \(id functions\.bash:0\)/);
  });

  test('found without any model id: the markers pick the family', () => {
    const r = run(markupInContent, { response: response({ model: undefined, message: { content: FIREWORKS_LEAK } }) });
    assert.equal(r.findings.length, 1);
  });

  test("another family's markers are a leak too (Kimi markup in a Qwen3 response)", (t) => {
    if (!has('qwen3')) return t.skip('the qwen3 format is not registered in this build');
    const r = run(markupInContent, { response: response({ model: 'qwen/qwen3-235b-a22b-2507', message: { content: FIREWORKS_LEAK } }) });
    assert.equal(r.findings.length, 1);
    assert.match(r.findings[0].message, /Kimi K2 tool-call markup \(in a .*Qwen.* response\)/);
  });

  test('Kilo #1775: gpt-oss Harmony markup in content', (t) => {
    if (!has('gpt-oss')) return t.skip('the gpt-oss format is not registered in this build');
    const content = '<|channel|>commentary to=read_file <|constrain|>json<|message|>{"path":"README.md"}';
    const r = run(markupInContent, { response: response({ model: 'openai/gpt-oss-20b', message: { content } }) });
    assert.equal(r.findings.length, 1);
    assert.match(r.findings[0].message, /<\|constrain\|>|<\|channel\|>/);
  });

  test('prose about markers, structured calls and an empty content are silent', () => {
    const prose = 'The tool_calls_section_begin token is a special token; write it as <|tool_calls_section_begin|> only in docs.'.replace(
      '<|',
      '< |',
    );
    assert.deepEqual(run(markupInContent, { response: response({ message: { content: prose } }) }).findings, []);
    const structured = response({ message: { content: 'Checking.', toolCalls: [call('read', '{"filePath":"a"}', 'functions.read:0')] } });
    assert.deepEqual(run(markupInContent, { response: structured }).findings, []);
    assert.deepEqual(run(markupInContent, { response: response() }).findings, []);
  });
});

describe('markup-in-reasoning', () => {
  test('the OpenCode #8851 thinking text: error, with the bash call recovered', () => {
    const r = run(markupInReasoning, { response: response({ message: { reasoning: OPENCODE_8851_REASONING }, finishReason: 'stop' }) });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].location, 'reasoning');
    assert.match(r.findings[0].message, /bash \(id functions\.bash:0\)/);
    assert.ok(slice(r, r.findings[0]).startsWith(K.SECTION_BEGIN));
  });

  test('markup in content is not reported as reasoning, and plain reasoning is silent', () => {
    assert.deepEqual(run(markupInReasoning, { response: response({ message: { content: FIREWORKS_LEAK } }) }).findings, []);
    assert.deepEqual(
      run(markupInReasoning, { response: response({ message: { reasoning: 'The user wants me to say hi in Portuguese.' } }) }).findings,
      [],
    );
  });
});

describe('special-token-in-text', () => {
  test('turn markers passed through as content (smg #1111)', () => {
    const r = run(specialTokenInText, { response: response({ message: { content: 'Oi!<|im_end|><|im_middle|>' } }) });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'warning');
    assert.match(r.findings[0].message, /2 control tokens in content \(<\|im_end\|>, <\|im_middle\|>\)/);
  });

  test('tool markers are left to markup-in-content, clean text is silent', () => {
    assert.deepEqual(run(specialTokenInText, { response: response({ message: { content: FIREWORKS_LEAK } }) }).findings, []);
    assert.deepEqual(run(specialTokenInText, { response: response({ message: { content: 'Oi! (Olá is more formal.)' } }) }).findings, []);
  });
});

describe('markup-in-tool-call', () => {
  test('a second call leaked into the arguments (OpenCode #37297): error at the marker', () => {
    const r = run(markupInToolCall, {
      response: response({ message: { toolCalls: [call('read', OPENCODE_37297_ARGS, 'functions.read:2')] }, finishReason: 'tool_calls' }),
    });
    assert.equal(r.findings.length, 1);
    const [f] = r.findings;
    assert.equal(f.severity, 'error');
    assert.equal(f.location, 'tool_calls[0].arguments');
    assert.ok(slice(r, f).startsWith(K.SECTION_BEGIN));
    assert.match(f.message, /arguments of call 0 \(read\)/);
  });

  test('tag-style marker text inside a string argument is the model writing about markup: silent, for any family', () => {
    const args = JSON.stringify({ content: 'if (s.startsWith("<tool_call>")) parse(s);' });
    for (const model of [undefined, 'qwen/qwen3-32b', 'z-ai/glm-4.6']) {
      const r = run(markupInToolCall, {
        response: response({ ...(model ? { model } : {}), message: { toolCalls: [call('write', args, 'functions.write:0')] } }),
      });
      assert.deepEqual(r.findings, [], model);
    }
  });

  test("tag-style markers outside any string (broken arguments) still count; another family's only warn", () => {
    const r = run(markupInToolCall, {
      response: response({ message: { toolCalls: [call('write', '{"a": 1}</tool_call>', 'functions.write:0')] } }),
    });
    const expected = formats.some((f) => f.toolMarkers.includes('</tool_call>')) ? 1 : 0;
    assert.equal(r.findings.length, expected);
    if (expected) assert.equal(r.findings[0].severity, 'warning');
  });

  test('ordinary arguments are silent', () => {
    const r = run(markupInToolCall, {
      response: response({ message: { toolCalls: [call('read', '{"filePath":"/repo/app/src/index.ts"}', 'functions.read:0')] } }),
    });
    assert.deepEqual(r.findings, []);
  });
});

describe('severity of tag-style markers', () => {
  test("another family's XML-like tags in content only warn; the family's own are errors", (t) => {
    if (!has('qwen3')) return t.skip('the qwen3 format is not registered in this build');
    const content = 'Wrap each call like this:\n<tool_call>{"name": "read"}</tool_call>';
    const kimi = run(markupInContent, { response: response({ message: { content } }) });
    assert.deepEqual(
      kimi.findings.map((f) => f.severity),
      ['warning'],
    );
    const qwen = run(markupInContent, { response: response({ model: 'qwen/qwen3-235b-a22b-2507', message: { content } }) });
    assert.deepEqual(
      qwen.findings.map((f) => f.severity),
      ['error'],
    );
    assert.match(qwen.findings[0].message, /1 call: read/);
  });

  test('a <think> tag in the content of a family that does not use it is not a control token', () => {
    const r = run(specialTokenInText, {
      response: response({ model: 'openai/gpt-oss-20b', message: { content: 'Models like R1 open with <think>.' } }),
    });
    assert.deepEqual(r.findings, []);
  });
});

describe('other families', () => {
  test('DeepSeek V3.1 markup returned as content (SGLang: a JSON error sends the whole text to content)', (t) => {
    if (!has('deepseek-v31')) return t.skip('the deepseek-v31 format is not registered in this build');
    const content =
      '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{"filePath": "a",}<｜tool▁call▁end｜><｜tool▁calls▁end｜>';
    const r = run(markupInContent, { response: response({ model: 'deepseek/deepseek-chat-v3.1', message: { content } }) });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'error');
    assert.match(r.findings[0].message, /DeepSeek/);
  });

  test('a Harmony channel glued to the tool name (vLLM PRs #32633 / #35906)', (t) => {
    if (!has('gpt-oss')) return t.skip('the gpt-oss format is not registered in this build');
    const r = run(markupInToolCall, {
      response: response({
        model: 'openai/gpt-oss-120b',
        message: { toolCalls: [call('manage_cart<|channel|>commentary', '{}', 'call_1')] },
      }),
    });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].location, 'tool_calls[0].name');
    assert.equal(r.findings[0].severity, 'error');
  });
});

describe('attribution of shared markers', () => {
  test('`<tool_call>` with a JSON body is read as Qwen3 (Hermes), with `<function=` as Qwen3-Coder', (t) => {
    if (!has('qwen3') || !has('qwen3-coder')) return t.skip('the qwen3 formats are not registered in this build');
    const hermes = run(markupInContent, {
      response: response({ message: { content: 'Calling.\n<tool_call>\n{"name": "read", "arguments": {"filePath": "a"}}\n</tool_call>' } }),
    });
    assert.match(hermes.findings[0].message, /^Qwen3 \(Hermes/);
    const coder = run(markupInContent, {
      response: response({
        message: { content: 'Calling.\n<tool_call>\n<function=read>\n<parameter=filePath>\na\n</parameter>\n</function>\n</tool_call>' },
      }),
    });
    assert.match(coder.findings[0].message, /^Qwen3-Coder/);
    assert.match(coder.findings[0].message, /1 call: read/);
  });
});

// markup-in-tool-call on the structured calls a provider returned: the call syntax of the next parameter or call
// inside a JSON argument value or key means the provider's parser read past the end of a value; the same tags written
// as data (balanced, or a lone tag that any parser of the dialect carries through) stay silent.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import markupInToolCall from '../../../src/core/checks/markup-in-tool-call';
import { parseResponseBody } from '../../../src/core/wire/index';
import { call, response, run, slice } from './helpers';

const GLM = 'z-ai/glm-4.6';
const CODER = 'qwen/qwen3-coder';
const withArgs = (model: string, args: object | string, name = 'edit') =>
  response({
    model,
    message: { toolCalls: [call(name, typeof args === 'string' ? args : JSON.stringify(args), 'call_1')] },
    finishReason: 'tool_calls',
  });
const findings = (model: string, args: object | string, name?: string) =>
  run(markupInToolCall, { response: withArgs(model, args, name) }).findings;

describe('markup-in-tool-call: a parameter or call swallowed into a value', () => {
  test('GLM `</arg_value><arg_key>…` inside a value: an error naming the key and the markers', () => {
    const args = { path: 'a.ts', old_string: 'x</arg_value>\n<arg_key>new_string</arg_key>\n<arg_value>y' };
    const r = run(markupInToolCall, { response: withArgs(GLM, args) });
    assert.equal(r.findings.length, 1);
    const [f] = r.findings;
    assert.equal(f.severity, 'error');
    assert.equal(f.location, 'tool_calls[0].arguments');
    assert.match(f.message, /inside the value of "old_string" \(<\/arg_value>, <arg_key>/);
    assert.match(f.message, /swallowed the next parameter or call/);
  });

  test('Qwen3-Coder `</parameter>\\n<parameter=` inside a value, whatever family the response is (the syntax is the evidence)', () => {
    const args = { path: 'a.ts\n</parameter>\n<parameter=content>\nhello' };
    for (const model of [CODER, 'moonshotai/kimi-k2-0905', 'acme/unknown-model']) {
      const f = findings(model, args);
      assert.equal(f.length, 1, model);
      assert.equal(f[0].severity, 'error', model);
      assert.match(f[0].message, /<\/parameter>, <parameter=/, model);
    }
  });

  test('GLM value whose closer the model forgot: the next key and an open `<arg_value>` inside it', () => {
    const f = findings(GLM, { path: 'a.ts\n<arg_key>content</arg_key>\n<arg_value>hello' });
    assert.equal(f[0]?.severity, 'error');
    assert.match(f[0].message, /\(<\/arg_key>, <arg_value>\)/);
  });

  test('a call swallowed after the last value (`</parameter></function></tool_call><tool_call>`) is an error', () => {
    const args = { command: 'ls\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=read>\n<parameter=path>\na' };
    assert.equal(findings(CODER, args, 'bash')[0]?.severity, 'error');
  });

  test('markup in a key (`"path</arg_key><arg_value>a.ts"`) is an error', () => {
    const f = findings(GLM, { 'path</arg_key><arg_value>a.ts': 'x' });
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.match(f[0].message, /inside the key "path<\/arg_key><arg_value>a\.ts"/);
  });

  test('the family\'s own value closer alone in a value (`"a.ts</arg_value>"`) is an error: every parser of the dialect ends the value there', () => {
    assert.equal(findings(GLM, { path: 'a.ts</arg_value>' })[0]?.severity, 'error');
    assert.equal(findings(CODER, { path: 'a.ts\n</parameter>\n' })[0]?.severity, 'error');
  });

  test('the range points at the markers when the native text holds the arguments verbatim (Kimi renders the JSON as is)', () => {
    const args = JSON.stringify({ old: 'x</arg_value><arg_key>new</arg_key><arg_value>y' });
    const r = run(markupInToolCall, { response: withArgs('moonshotai/kimi-k2-0905', args) });
    assert.equal(r.findings.length, 1);
    assert.equal(slice(r, r.findings[0]), '</arg_value><arg_key>new</arg_key><arg_value>');
  });

  test('end to end: an OpenRouter body whose GLM call swallowed the next parameter gives an error finding on that call', () => {
    const body = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion',
      model: GLM,
      provider: 'Chutes',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: '',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: {
                  name: 'write_file',
                  arguments: JSON.stringify({ path: 'src/a.ts</arg_value>\n<arg_key>content</arg_key>\n<arg_value>export {}' }),
                },
              },
            ],
          },
        },
      ],
    });
    const a = analyze({ response: parseResponseBody(body) });
    const f = a.findings.filter((x) => x.rule === 'markup-in-tool-call');
    assert.equal(f.length, 1);
    assert.equal(f[0].severity, 'error');
    assert.equal(f[0].location, 'tool_calls[0].arguments');
  });
});

describe('markup-in-tool-call: the same tags written as data stay silent', () => {
  test('a file that documents the GLM or Qwen3-Coder call syntax (balanced tags, the pairs included)', () => {
    const glmDoc = {
      path: 'docs/glm.md',
      content:
        'A call:\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n<arg_key>limit</arg_key>\n<arg_value>5</arg_value>\n</tool_call>\n',
    };
    const coderDoc = {
      path: 'docs/coder.md',
      content:
        '<tool_call>\n<function=read>\n<parameter=path>\na\n</parameter>\n<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>',
    };
    for (const model of [GLM, CODER, 'moonshotai/kimi-k2-0905']) {
      assert.deepEqual(findings(model, glmDoc, 'write_file'), [], model);
      assert.deepEqual(findings(model, coderDoc, 'write_file'), [], model);
    }
  });

  test('a documented call left without its closer: the pairs inside it are balanced, so no swallow', () => {
    assert.deepEqual(
      findings(GLM, { content: 'Example:\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>' }, 'write_file'),
      [],
    );
  });

  test("a lone tag a parser carries through as data: `</arg_key>` or `<arg_value>` in a GLM value, `<parameter=` alone, another family's closers", () => {
    assert.deepEqual(findings(GLM, { old_string: 'if "</arg_key>" in text:' }), []);
    assert.deepEqual(findings(GLM, { old_string: 'text.split("<arg_value>")' }), []);
    assert.deepEqual(findings(CODER, { old_string: 'const open = "<parameter=";' }), []);
    assert.deepEqual(findings('moonshotai/kimi-k2-0905', { old_string: '  </parameter>\n</function>' }), []);
  });
});

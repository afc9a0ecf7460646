import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import markupResidue from '../../../src/core/checks/markup-residue';
import { response, run, slice } from './helpers';

describe('markup-residue', () => {
  test('an orphan </tool_call> after a bare call body (Hermes, conformance fixture 5.b) is an error at the closer', () => {
    const text = '{"name": "get_weather", "arguments": {"location": "NYC"}}</tool_call>';
    const r = run(markupResidue, { nativeText: text, model: 'NousResearch/Hermes-3-Llama-3.1-8B' });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'error');
    assert.equal(slice(r, r.findings[0]), '</tool_call>');
  });

  test('GLM: a call body with no <tool_call> leaves its closer as residue', () => {
    const r = run(markupResidue, {
      nativeText: 'I will check that. get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>',
      model: 'z-ai/glm-4.6',
    });
    assert.ok(r.findings.length >= 1);
    assert.ok(r.findings.every((f) => f.severity === 'error' && f.location === 'content'));
  });

  test('a structured turn whose content ends in a cut-off opener', () => {
    const r = run(markupResidue, { response: response({ model: 'qwen/qwen3-32b', message: { content: 'Let me look.\n<tool_ca' } }) });
    assert.equal(r.findings.length, 1);
    assert.equal(slice(r, r.findings[0]), '<tool_ca');
    assert.equal(r.findings[0].expectedMarker, '<tool_call>');
  });

  test('healthy turns, marker text inside a string argument and another family’s tags are silent', () => {
    const healthy = [
      {
        nativeText: '<tool_call>\n{"name": "write", "arguments": {"text": "wrap calls in <tool_call> and </tool_call>"}}\n</tool_call>',
        model: 'qwen/qwen3-32b',
      },
      { nativeText: 'Plain prose about a <div> and a < b.', model: 'qwen/qwen3-32b' },
      { response: response({ model: 'qwen/qwen3-32b', message: { content: 'Done: the file is saved.' } }) },
      { response: response({ model: 'moonshotai/kimi-k2-0905', message: { content: 'In Qwen the tag is <tool_call>' } }) },
    ];
    for (const input of healthy) assert.deepEqual(run(markupResidue, input).findings, [], JSON.stringify(input).slice(0, 120));
  });
});

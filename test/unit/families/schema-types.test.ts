// Parameters of grammars that carry no types, typed by the request's tool schema (as vLLM's qwen3coder
// `_convert_param_value` and SGLang's step3 `get_argument_type` do), in the parse output and in repair mode.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeWithContext } from '../../../src/core/analyze';
import { getFormat } from '../../../src/core/families/index';
import { schemaArguments } from '../../../src/core/families/shared/schema-types';
import type { FamilyId, NormalizedRequest, ToolDef } from '../../../src/core/model';
import { turnReport } from '../../../src/core/parsed';
import { readCalls } from '../../../src/core/repair/calls';

const TOOL: ToolDef = {
  name: 'edit',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string' },
      line: { type: 'integer' },
      ratio: { type: 'number' },
      force: { type: 'boolean' },
      opts: { type: 'object' },
      lines: { type: 'array' },
      note: { type: ['string', 'null'] },
      count: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    },
  },
};
// What the model wrote, every value as text: a string that reads as a number, numbers, a boolean, JSON, null.
const WRITTEN = { path: '42', line: '7', ratio: '2.50', force: 'True', opts: '{"a": 1}', lines: '[1, 2]', note: 'null', count: '3' };
const TYPED = { path: '42', line: 7, ratio: 2.5, force: true, opts: { a: 1 }, lines: [1, 2], note: null, count: 3 };

/** Families whose parameters are untyped text. Rendering a message of string values writes each text as is. */
const UNTYPED: FamilyId[] = ['qwen3-coder', 'glm45', 'glm47', 'ling3', 'minimax-m2', 'seed-oss', 'step3'];

function rendered(family: FamilyId): string {
  return getFormat(family).render({ toolCalls: [{ index: 0, name: 'edit', arguments: JSON.stringify(WRITTEN) }] }).text;
}

const request = (tools: ToolDef[]): NormalizedRequest => ({ protocol: 'openai-chat', tools, messages: [], raw: {} });

describe('arguments typed by the request schema', () => {
  for (const family of UNTYPED) {
    test(`${family}: the parse with the schema gives the schema's types; without it, the generic reading`, () => {
      const text = rendered(family);
      const call = getFormat(family).parse(text).message.toolCalls[0];
      assert.deepEqual(JSON.parse(schemaArguments(call, [TOOL])), TYPED);
      // Without the request: '42' reads as a number, 'True' stays text (not JSON), 'null' is null.
      assert.deepEqual(JSON.parse(schemaArguments(call, undefined)), { ...TYPED, path: 42, force: 'True' });
      // lint --json / show --json: argumentsJson carries the typed values when the request is known.
      const { analysis, ctx } = analyzeWithContext({ nativeText: text, family, request: request([TOOL]) });
      assert.deepEqual(turnReport(analysis, ctx).calls[0].argumentsJson, TYPED);
      assert.deepEqual(
        analysis.findings.filter((f) => f.rule === 'args-schema'),
        [],
        'a string "42" is not a schema error',
      );
      // Repair mode delivers the typed arguments.
      const repaired = readCalls(getFormat(family), text, 'content', 0, { tools: [TOOL], historyCalls: 0, seed: 's' });
      assert.deepEqual(JSON.parse(repaired.calls[0].arguments), TYPED);
    });
  }

  test('grammar-typed parameters keep the grammar reading (DSML string="true", Kimi K3 type="string")', () => {
    for (const family of ['deepseek-v32', 'deepseek-v41', 'kimi-k3'] as FamilyId[]) {
      const m = { toolCalls: [{ index: 0, name: 'edit', arguments: JSON.stringify({ path: '42', line: 7 }) }] };
      const call = getFormat(family).parse(getFormat(family).render(m).text).message.toolCalls[0];
      assert.deepEqual(JSON.parse(schemaArguments(call, [TOOL])), { path: '42', line: 7 }, family);
    }
  });

  test('a value that is not of its declared type stays the text; unknown keys and tools are left as written', () => {
    const text = getFormat('qwen3-coder').render({
      toolCalls: [{ index: 0, name: 'edit', arguments: JSON.stringify({ line: 'seven', ratio: '1e400', extra: '5' }) }],
    }).text;
    const call = getFormat('qwen3-coder').parse(text).message.toolCalls[0];
    assert.deepEqual(JSON.parse(schemaArguments(call, [TOOL])), { line: 'seven', ratio: '1e400', extra: '5' });
    assert.equal(schemaArguments(call, [{ name: 'other' }]), call.arguments);
    assert.equal(
      schemaArguments({ index: 0, name: 'edit', arguments: '{"line":"7"}' }, [TOOL]),
      '{"line":"7"}',
      'structured calls are not retyped',
    );
  });
});

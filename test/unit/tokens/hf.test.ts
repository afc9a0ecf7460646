import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UserError } from '../../../src/core/model';
import { HfJsonTokenizer, loadHfTokenizer } from '../../../src/core/tokens/hf';
import { buildTokenStream } from '../../../src/core/tokens/stream';
import { MULTILINGUAL_SAMPLES } from './corpus';
import { lenmlDir } from './helpers';

const sample = MULTILINGUAL_SAMPLES.join('\n');

const cases = [
  {
    pkg: 'qwen3',
    marker: '<tool_call>',
    id: 151657,
    extra: [
      ['<|im_end|>', 151645],
      ['</think>', 151668],
    ],
  },
  { pkg: 'deepseek_v3', marker: '<｜tool▁calls▁begin｜>', id: 128806, extra: [['<｜tool▁sep｜>', 128814]] },
  {
    pkg: 'gptoss',
    marker: '<|call|>',
    id: 200012,
    extra: [
      ['<|channel|>', 200005],
      ['<|message|>', 200008],
    ],
  },
] as const;

for (const c of cases) {
  const found = lenmlDir(c.pkg);
  describe(`tokenizer.json family: ${c.pkg}`, { skip: 'skip' in found ? found.skip : false }, () => {
    const tok = loadHfTokenizer('dir' in found ? found.dir : '', c.pkg);

    test('special strings encode to their ids, or as ordinary tokens on request', () => {
      assert.deepEqual(tok.encode(c.marker), [c.id]);
      for (const [s, id] of c.extra) assert.deepEqual(tok.encode(s), [id]);
      assert.equal(tok.specials.get(c.marker), c.id);
      assert.equal(tok.specialName(c.id), c.marker);
      const spelled = tok.encodeOrdinary(`x${c.marker}y`);
      assert.ok(spelled.length > 3);
      assert.ok(spelled.every((id) => tok.specialName(id) === undefined));
      assert.equal(Buffer.concat(spelled.map((id) => tok.tokenBytes(id)!)).toString('utf8'), `x${c.marker}y`);
    });

    test('token bytes spell the text back; idOfBytes inverts them', () => {
      const ids = tok.encode(sample);
      assert.equal(Buffer.concat(ids.map((id) => tok.tokenBytes(id)!)).toString('utf8'), sample.normalize('NFC'));
      for (const id of ids.slice(0, 200)) assert.equal(tok.idOfBytes(tok.tokenBytes(id)!), id);
    });

    test('a marker written as text in content is marked marker-as-text in the stream', () => {
      const text = `Calling now ${c.marker} done`;
      const stream = buildTokenStream({
        tokenizer: tok,
        native: { text, segments: [{ kind: 'content', start: 0, end: text.length }] },
        source: 'reconstructed',
      });
      const spelled = stream.tokens.filter((t) => t.kind === 'marker-as-text');
      assert.ok(spelled.length > 1);
      assert.ok(
        spelled
          .map((t) => text.slice(t.start, t.end))
          .join('')
          .includes(c.marker),
      );
      assert.ok(!stream.tokens.some((t) => t.kind === 'special'));
      assert.equal(stream.accounting.counted, tok.encode(text).length, 'counted with the marker as one special token');
    });
  });
}

describe('tokenizer.json errors', () => {
  test('a tokenizer.json missing a required key is a UserError', () => {
    assert.throws(() => new HfJsonTokenizer({ json: { model: {} }, name: 'broken' }), UserError);
  });
  test('a missing folder is a UserError', () => {
    assert.throws(() => loadHfTokenizer('/nonexistent/tokenscope', 'x'), UserError);
  });
});

/**
 * A request whose tool schema nests 10,000 objects deep (300 KB of JSON an agent may well send): every export format
 * is written without overflowing the stack, and what it holds is the same value. The JSON writer they use is
 * checked against JSON.stringify on random values.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportText, EXPORT_FORMATS } from '../../../src/core/export/index';
import { deepJsonText, jsonDepth, jsonText } from '../../../src/core/export/json-text';
import { prepareRepro } from '../../../src/core/export/repro';
import { toYaml } from '../../../src/core/export/testcase';
import { brokenKimiCapture } from '../../fixtures/export/captures';
import { prng } from '../../helpers/prng';

const DEPTH = 10_000;
/** `{"type":"object","properties":{"x": … {"type":"string"} … }}`, DEPTH objects deep, as text (JSON.stringify cannot). */
const DEEP = '{"type":"object","properties":{"x":'.repeat(DEPTH) + '{"type":"string"}' + '}}'.repeat(DEPTH);

function deepCapture() {
  const c = brokenKimiCapture();
  const body = JSON.parse(c.exchange.requestBody!);
  body.tools[0].function.parameters.properties.deep = '__DEEP__';
  c.exchange.requestBody = JSON.stringify(body).replace('"__DEEP__"', DEEP);
  return c;
}

test(`every export format writes a request whose tool schema nests ${DEPTH} objects deep`, () => {
  const r = prepareRepro(deepCapture());
  for (const format of EXPORT_FORMATS) {
    const text = exportText([r], format);
    assert.ok(text.length > DEPTH, format);
    if (format === 'k2vv') {
      const sample = JSON.parse(text);
      assert.equal(jsonDepth(sample.tools[0].function.parameters.properties.deep), 2 * DEPTH + 1, 'the schema whole');
    }
    if (format === 'bundle') assert.equal(jsonDepth(JSON.parse(text)) > 2 * DEPTH, true);
    if (format === 'promptfoo') {
      // The deep part is written in flow style (its JSON, which YAML reads as is) on one line.
      const line = text.split('\n').find((l) => l.includes('"properties":{"x":'))!;
      const flow = JSON.parse(line.slice(line.indexOf(': ') + 2)) as object;
      assert.ok(jsonDepth(flow) > DEPTH);
    }
  }
});

test('the JSON writer gives JSON.stringify text for any JSON value, at any indent, and compact past 64 levels', () => {
  const rand = prng(11);
  const gen = (d: number): unknown => {
    const k = Math.floor(rand() * 10);
    if (d > 5 || k < 4) return [null, true, false, 1.5, -0, 'a"b\u2028\n', undefined, NaN, Infinity, 'ünï', 12e30][Math.floor(rand() * 11)];
    if (k < 7) return Array.from({ length: Math.floor(rand() * 4) }, () => gen(d + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, (_, i) => [['a', 'b"', '1', ''][i], gen(d + 1)]));
  };
  for (let i = 0; i < 2000; i++) {
    const v = gen(0);
    for (const space of [0, 2]) assert.equal(deepJsonText(v, space), JSON.stringify(v, null, space));
  }
  const deep = JSON.parse(DEEP);
  assert.throws(() => JSON.stringify(deep), RangeError, 'the native writer cannot');
  assert.deepEqual(JSON.parse(jsonText(deep, 2)).type, 'object');
  assert.equal(jsonText(deep), DEEP);
  assert.ok(jsonText(deep, 2).length < DEEP.length + 20_000, 'indented only near the top');
});

test('YAML past 64 levels is flow style: the same value, one line', () => {
  let v: unknown = 'leaf';
  for (let i = 0; i < 100; i++) v = { k: v };
  const yaml = toYaml({ root: v });
  assert.ok(yaml.split('\n').length < 100);
  assert.match(yaml, /^ +\{"k":\{"k":.*"leaf"\}+$/m);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('deepseek-v41');
// The spaced DSML of DeepSeek V4.1, as SGLang's `deepseekv41` serving test feeds it (model deepseek-ai/DeepSeek-V4.1-Flash).
const BLOCK =
  '\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n' +
  '<｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜ parameter>\n' +
  '<｜DSML｜ parameter name="days" string="false">3</｜DSML｜ parameter>\n' +
  '</｜DSML｜ invoke>\n</｜DSML｜ calls>';

function parse(text: string, family = f) {
  const p = family.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

test('deepseek-v41: the spaced block parses clean with typed values, found by model id and by markers', () => {
  const p = parse(`Let me check.${BLOCK}<｜end▁of▁sentence｜>`);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, {
    content: 'Let me check.',
    toolCalls: [{ index: 0, name: 'get_weather', arguments: '{"city":"Paris","days":3}' }],
  });
  assert.equal(detectFamily('deepseek-ai/DeepSeek-V4.1-Flash')?.format.id, 'deepseek-v41');
  assert.equal(detectFamily('deepseek/deepseek-v4-flash')?.format.id, 'deepseek-v4');
  assert.equal(detectFamily(undefined, BLOCK)?.format.id, 'deepseek-v41');
  assert.equal(
    detectFamily(undefined, BLOCK.replace(/｜DSML｜ /g, '｜DSML｜').replace(/calls>/g, 'tool_calls>'))?.format.id,
    'deepseek-v4',
  );
});

test('deepseek-v4: a V4 model id served by V4.1 (the spaced spelling) still gives the calls', () => {
  const p = parse(BLOCK, getFormat('deepseek-v4'));
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message.toolCalls, [{ index: 0, name: 'get_weather', arguments: '{"city":"Paris","days":3}' }]);
  const leak = analyze({ nativeText: BLOCK.slice(0, BLOCK.indexOf('Paris') + 3), family: 'deepseek-v4' });
  assert.ok(
    leak.findings.some((x) => x.severity === 'error'),
    leak.findings.map((x) => x.rule).join(),
  );
});

test('deepseek-v41: render writes the spaced spelling and round-trips', () => {
  const m = { content: 'Checking.', toolCalls: [{ index: 0, name: 'search', arguments: '{"q":"rain","n":[1,2]}' }] };
  const text = f.render(m).text;
  assert.ok(text.includes('<｜DSML｜ invoke name="search">') && text.includes('</｜DSML｜ calls>'), text);
  assert.deepEqual(parse(text).message, m);
});

test('deepseek-v41: every cut of the block is flagged, never thrown on', () => {
  const whole = `${BLOCK}<｜end▁of▁sentence｜>`;
  const callStart = whole.indexOf('<｜DSML｜ invoke');
  for (let i = 0; i <= whole.length; i++) {
    const p = parse(whole.slice(0, i));
    if (i > callStart + 4 && i < whole.indexOf('</｜DSML｜ calls>')) assert.ok(p.problems.length > 0, JSON.stringify(whole.slice(0, i)));
  }
  const cut = parse(whole.slice(0, whole.indexOf('Paris') + 2));
  assert.ok(codes(cut).includes('call-unclosed'), codes(cut).join());
});

test('deepseek-v41: an orphan closer and a lone opener left in content are flagged', () => {
  for (const text of ['Done.</｜DSML｜ invoke>\n</｜DSML｜ calls>', `Answer.${BLOCK}\n<｜DSML｜ calls>`]) {
    const a = analyze({ nativeText: text, family: 'deepseek-v41' });
    assert.ok(
      a.findings.some((x) => x.severity === 'error'),
      `${JSON.stringify(text)}: ${a.findings.map((x) => x.rule).join()}`,
    );
  }
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sectionUnclosed from '../../../src/core/checks/section-unclosed';
import callUnclosed from '../../../src/core/checks/call-unclosed';
import markerTruncated from '../../../src/core/checks/marker-truncated';
import reasoningUnclosed from '../../../src/core/checks/reasoning-unclosed';
import malformedCall from '../../../src/core/checks/malformed-call';
import strayMarker from '../../../src/core/checks/stray-marker';
import { FIREWORKS_LEAK, K, KIMI, OPENCODE_1021, OPENCODE_8851_REASONING, kimiSection, response, run, slice } from './helpers';

describe('section-unclosed', () => {
  test('raw Kimi text whose section never closes (OpenCode #1021): error with the ghost position', () => {
    const r = run(sectionUnclosed, { nativeText: OPENCODE_1021, model: KIMI });
    assert.equal(r.findings.length, 1);
    const [f] = r.findings;
    assert.equal(f.severity, 'error');
    assert.equal(f.expectedMarker, K.SECTION_END);
    assert.equal(f.expectedAt, OPENCODE_1021.length, 'the section end belongs right after the last call end');
    assert.ok(slice(r, f).startsWith(K.SECTION_BEGIN));
    assert.match(f.message, /<\|tool_calls_section_begin\|>.*never closed.*<\|tool_calls_section_end\|> is missing/);
  });

  test('the same markup leaked into a structured content field: located in content, offsets in the rendered text', () => {
    const r = run(sectionUnclosed, { response: response({ message: { content: OPENCODE_1021 }, finishReason: 'stop' }) });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].location, 'content');
    assert.ok(slice(r, r.findings[0]).startsWith(K.SECTION_BEGIN));
    assert.equal(r.text.slice(r.findings[0].expectedAt! - K.CALL_END.length, r.findings[0].expectedAt), K.CALL_END);
  });

  test('a closed section is silent', () => {
    assert.deepEqual(run(sectionUnclosed, { nativeText: `Reading.${kimiSection()}<|im_end|>`, model: KIMI }).findings, []);
  });
});

describe('call-unclosed', () => {
  const cut = `${K.SECTION_BEGIN}${K.CALL_BEGIN}functions.read:0${K.ARG_BEGIN}{"filePath":"src/app.ts"}`;

  test('a call cut before its end marker names the call', () => {
    const r = run(callUnclosed, { nativeText: cut, model: KIMI });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'error');
    assert.equal(r.findings[0].expectedMarker, K.CALL_END);
    assert.equal(r.findings[0].location, 'tool_calls[0]');
    assert.match(r.findings[0].message, /call 0 \(read\).*never closed/);
  });

  test('closed calls are silent', () => {
    assert.deepEqual(run(callUnclosed, { nativeText: kimiSection(), model: KIMI }).findings, []);
  });
});

describe('marker-truncated', () => {
  test('reasoning ending with `<|tool_calls_section_end|` (OpenCode #8851)', () => {
    const r = run(markerTruncated, { response: response({ message: { reasoning: OPENCODE_8851_REASONING }, finishReason: 'stop' }) });
    assert.equal(r.findings.length, 1);
    const [f] = r.findings;
    assert.equal(f.location, 'reasoning');
    assert.equal(slice(r, f), '<|tool_calls_section_end|');
    assert.equal(f.expectedMarker, K.SECTION_END);
    assert.match(f.message, /lacks|cut short/);
  });

  test('the same text in raw form', () => {
    const r = run(markerTruncated, { nativeText: `<think>${OPENCODE_8851_REASONING}`, model: KIMI });
    assert.equal(r.findings.length, 1);
    assert.equal(slice(r, r.findings[0]), '<|tool_calls_section_end|');
  });

  test('complete markers are silent', () => {
    const r = run(markerTruncated, { response: response({ message: { reasoning: OPENCODE_8851_REASONING + '>' } }) });
    assert.deepEqual(r.findings, []);
  });
});

describe('reasoning-unclosed', () => {
  test('thinking that runs straight into the tool-call section (K2 Thinking without </think>)', () => {
    const r = run(reasoningUnclosed, { nativeText: `<think>I need the file first.${kimiSection()}`, model: KIMI });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'warning');
    assert.equal(r.findings[0].expectedMarker, '</think>');
  });

  test('closed thinking is silent', () => {
    assert.deepEqual(
      run(reasoningUnclosed, { nativeText: `<think>I need the file first.</think>${kimiSection()}`, model: KIMI }).findings,
      [],
    );
  });
});

describe('malformed-call', () => {
  test('the Fireworks leak: arguments without a call begin, id without `functions.`', () => {
    const r = run(malformedCall, { nativeText: FIREWORKS_LEAK, model: KIMI });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'error');
    assert.match(r.findings[0].message, /channel_reply:0/);
    assert.match(r.findings[0].message, /<\|tool_call_begin\|>/);
  });

  test('well-formed calls are silent', () => {
    assert.deepEqual(run(malformedCall, { nativeText: kimiSection(), model: KIMI }).findings, []);
  });
});

describe('stray-marker', () => {
  test('a section end with no section', () => {
    const r = run(strayMarker, { nativeText: `All done.${K.SECTION_END}`, model: KIMI });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'warning');
    assert.equal(slice(r, r.findings[0]), K.SECTION_END);
  });

  test('plain prose is silent', () => {
    assert.deepEqual(run(strayMarker, { nativeText: 'All done: the tool_calls_section markers are fine.', model: KIMI }).findings, []);
  });
});

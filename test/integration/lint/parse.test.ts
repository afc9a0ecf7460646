// The parse as output: `lint --json` / `show --json` print what a correct parser extracts, through the real CLI.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import type { TurnReport } from '../../../src/core/parsed';
import { K, KIMI } from '../../unit/checks/helpers';

const dir = mkdtempSync(join(tmpdir(), 'tokenscope-parse-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

// Two calls, the second cut off mid-arguments (the output stopped).
const TWO = `I will look.${K.SECTION_BEGIN}${K.CALL_BEGIN}functions.read:0${K.ARG_BEGIN}{"filePath":"a.ts"}${K.CALL_END}${K.CALL_BEGIN}functions.ls:1${K.ARG_BEGIN}{"pa`;

describe('lint --json prints the parse', () => {
  test('raw text: family, its source, content, and each call with its range, parsed arguments and completeness', async () => {
    const r = await cli('lint', '--json', '--model', KIMI, file('two.txt', TWO));
    assert.equal(r.code, 1, r.err);
    const j = JSON.parse(r.out) as TurnReport;
    assert.deepEqual(Object.keys(j).slice(0, 6), ['family', 'familySource', 'content', 'reasoning', 'calls', 'findings']);
    assert.equal(j.family, 'kimi-k2');
    assert.equal(j.familySource, 'model-id');
    assert.equal(j.content, 'I will look.');
    assert.equal(j.reasoning, null);
    assert.equal(j.providerCalls, null, 'raw text: no provider parser ran');
    assert.equal(j.calls.length, 2);
    const [a, b] = j.calls;
    assert.deepEqual(Object.keys(a), ['index', 'id', 'name', 'arguments', 'argumentsJson', 'complete', 'start', 'end']);
    assert.deepEqual(
      { index: a.index, id: a.id, name: a.name, arguments: a.arguments, argumentsJson: a.argumentsJson, complete: a.complete },
      {
        index: 0,
        id: 'functions.read:0',
        name: 'read',
        arguments: '{"filePath":"a.ts"}',
        argumentsJson: { filePath: 'a.ts' },
        complete: true,
      },
    );
    assert.equal(TWO.slice(a.start!, a.end!), `${K.CALL_BEGIN}functions.read:0${K.ARG_BEGIN}{"filePath":"a.ts"}${K.CALL_END}`);
    assert.equal(b.name, 'ls');
    assert.equal(b.arguments, '{"pa');
    assert.equal(b.argumentsJson, null);
    assert.equal(b.complete, false);
    assert.equal(b.end, TWO.length);
    assert.ok(j.findings.some((f) => f.rule === 'call-unclosed'));
  });

  test('family from the markers when no model id is given', async () => {
    const r = await cli(
      'lint',
      '--json',
      file('hermes.txt', '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
    );
    const j = JSON.parse(r.out) as TurnReport;
    assert.equal(j.familySource, 'markers');
    assert.equal(j.calls[0].name, 'get_weather');
    assert.deepEqual(j.calls[0].argumentsJson, { city: 'Paris' });
  });

  test('a structured response with markup leaked into content: the leaked call is in the parse, the provider returned none', async () => {
    const body = JSON.stringify({
      id: 'gen-1',
      object: 'chat.completion',
      model: KIMI,
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: {
            role: 'assistant',
            content: `Posting.${K.SECTION_BEGIN}${K.CALL_BEGIN}functions.post:0${K.ARG_BEGIN}{"text":"hi"}${K.CALL_END}${K.SECTION_END}`,
          },
        },
      ],
    });
    const r = await cli('lint', '--json', file('leak.json', body));
    assert.equal(r.code, 1);
    const j = JSON.parse(r.out) as TurnReport;
    assert.equal(j.source, 'reconstruction');
    assert.deepEqual(j.providerCalls, []);
    assert.equal(j.content, 'Posting.');
    assert.equal(j.calls.length, 1);
    assert.equal(j.calls[0].name, 'post');
    assert.equal(j.calls[0].complete, true);
  });

  test('the human output lists the calls, control characters escaped', async () => {
    const r = await cli('lint', '--model', KIMI, file('two-h.txt', TWO.replace('a.ts', 'a\\u001b[31m.ts')));
    assert.match(r.out, /^calls \(parsed from the model text\):$/m);
    assert.match(r.out, /^ {2}0 {2}read \(id functions\.read:0\) \{"filePath":"a\\u001b\[31m\.ts"\} \[\d+–\d+\)$/m);
    assert.match(r.out, /^ {2}1 {2}ls \(id functions\.ls:1\) \{"pa \[\d+–\d+\) {2}cut off, arguments not JSON$/m);
    assert.ok(!r.out.includes('\u001b'), 'no raw escape reaches the terminal');
  });
});

describe('show prints the parse of a capture', () => {
  test('human and --json', async () => {
    const dataDir = join(dir, 'store');
    const store = await openStore(dataDir, { analyze: false });
    const body = JSON.stringify({
      id: 'gen-2',
      object: 'chat.completion',
      model: KIMI,
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'Reading.',
            tool_calls: [
              { index: 0, id: 'functions.read:0', type: 'function', function: { name: 'read', arguments: '{"filePath":"b.ts"}' } },
            ],
          },
        },
      ],
    });
    const w = store.begin({
      route: 'openrouter',
      upstreamUrl: 'https://openrouter.ai/api/v1/chat/completions',
      method: 'POST',
      path: '/api/v1/chat/completions',
      requestHeaders: {},
      requestBody: JSON.stringify({ model: KIMI, messages: [] }),
    });
    w.responseStarted(200, { 'content-type': 'application/json' });
    w.chunk(new TextEncoder().encode(body));
    await w.finish();
    await store.close();

    const human = await cli('show', w.id, '--data-dir', dataDir);
    assert.equal(human.code, 0, human.err);
    assert.match(human.out, /^ {2}0 {2}read \(id functions\.read:0\) \{"filePath":"b\.ts"\} \[\d+–\d+\)$/m);
    const j = JSON.parse((await cli('show', w.id, '--data-dir', dataDir, '--json')).out) as TurnReport & { exchange: { id: string } };
    assert.equal(j.exchange.id, w.id);
    assert.equal(j.family, 'kimi-k2');
    assert.equal(j.content, 'Reading.');
    assert.deepEqual(
      j.calls.map((c) => [c.name, c.argumentsJson, c.complete]),
      [['read', { filePath: 'b.ts' }, true]],
    );
    assert.deepEqual(
      j.providerCalls?.map((c) => c.id),
      ['functions.read:0'],
    );
    assert.deepEqual(
      j.findings.map((f) => f.rule),
      ['tool-unknown'],
      'the request offered no tools',
    );
  });
});

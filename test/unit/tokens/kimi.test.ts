import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Tiktoken } from 'tiktoken';
import { UserError } from '../../../src/core/model';
import { KIMI_PAT_STR, KIMI_SPECIAL_SLOTS, kimiSpecials, loadKimiTokenizer } from '../../../src/core/tokens/kimi';
import { decodeRankCache, encodeRankCache, parseRankFile } from '../../../src/core/tokens/ranks';
import { KIMI_SAMPLE_TURNS, MULTILINGUAL_SAMPLES, mixedCorpus } from './corpus';
import { kimiTokenizerDir } from './helpers';

const found = kimiTokenizerDir();
const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-kimi-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('Kimi K2 tokenizer', { skip: 'skip' in found ? found.skip : false }, () => {
  const dir = 'dir' in found ? found.dir : '';
  const kimi = loadKimiTokenizer({ dir, cacheDir: join(tmp, 'cache') });
  const oracle = new Tiktoken(readFileSync(join(dir, 'tiktoken.model'), 'utf8'), Object.fromEntries(kimi.specials), KIMI_PAT_STR);
  after(() => oracle.free());

  test('ids equal tiktoken token for token on a 1 MB mixed corpus', () => {
    const corpus = mixedCorpus();
    const ours = kimi.encode(corpus);
    const theirs = Array.from(oracle.encode(corpus, 'all'));
    const firstDiff = ours.findIndex((id, i) => id !== theirs[i]);
    assert.equal(firstDiff, -1, `first difference at token ${firstDiff}`);
    assert.equal(ours.length, theirs.length);
    assert.ok(ours.length > 200_000);
  });

  test('ordinary encoding equals tiktoken encode_ordinary (markers spelled out)', () => {
    for (const s of [...KIMI_SAMPLE_TURNS, ...MULTILINGUAL_SAMPLES]) {
      const ours = kimi.encodeOrdinary(s);
      assert.deepEqual(ours, Array.from(oracle.encode_ordinary(s)), s);
      assert.ok(
        ours.every((id) => kimi.specialName(id) === undefined),
        s,
      );
    }
  });

  test('every sample, alone, equals tiktoken (no help from a warm cache)', () => {
    const cold = loadKimiTokenizer({ dir, cacheDir: join(tmp, 'cache') });
    for (const s of [...KIMI_SAMPLE_TURNS, ...MULTILINGUAL_SAMPLES]) {
      assert.deepEqual(cold.encode(s), Array.from(oracle.encode(s, 'all')), s);
    }
  });

  test('known ids from Moonshot and llama.cpp examples', () => {
    const id = (s: string) => {
      const ids = kimi.encode(s);
      assert.equal(ids.length, 1, `${JSON.stringify(s)} is one token, got ${ids}`);
      return ids[0];
    };
    assert.equal(id('<|im_system|>'), 163594);
    assert.equal(id('system'), 14062);
    assert.equal(id('<|im_middle|>'), 163601);
    assert.equal(id('You'), 3900);
    assert.equal(id('Hello'), 19180);
    assert.equal(id('世界'), 2243);
    assert.equal(id("I'm"), 17172);
    assert.equal(id(' Chat'), 29338);
    assert.equal(id('GPT'), 111021);
    assert.deepEqual(kimi.encode('<|im_system|>system<|im_middle|>You'), [163594, 14062, 163601, 3900]);
  });

  test('256 special slots, named from tokenizer_config.json, the rest reserved', () => {
    assert.equal(kimi.specials.size, KIMI_SPECIAL_SLOTS);
    assert.equal(kimi.specials.get('<|tool_calls_section_begin|>'), 163595);
    assert.equal(kimi.specials.get('<|tool_calls_section_end|>'), 163596);
    assert.equal(kimi.specials.get('<think>'), 163606);
    assert.equal(kimi.specials.get('</think>'), 163607);
    assert.equal(kimi.specials.get('[PAD]'), 163839);
    assert.equal(kimi.specialName(163700), '<|reserved_token_163700|>');
    assert.equal(kimi.specialName(163589), '<|reserved_token_163589|>');
    assert.equal(kimi.specialName(19180), undefined);
    assert.deepEqual(kimi.encode('<|reserved_token_163700|>'), [163700]);
    assert.equal(new TextDecoder().decode(kimi.tokenBytes(163595)), '<|tool_calls_section_begin|>');
  });

  test('token bytes concatenate back to the text; idOfBytes inverts tokenBytes', () => {
    const text = MULTILINGUAL_SAMPLES.join('\n');
    const ids = kimi.encode(text);
    const bytes = Buffer.concat(ids.map((id) => kimi.tokenBytes(id)!));
    assert.equal(bytes.toString('utf8'), text);
    for (const id of ids) assert.equal(kimi.idOfBytes(kimi.tokenBytes(id)!), id);
    assert.equal(kimi.tokenBytes(-1), undefined);
    assert.equal(kimi.tokenBytes(163840), undefined);
  });

  test('the rank cache is written once, reused, and a corrupt cache is replaced', () => {
    const cacheDir = join(tmp, 'cache2');
    const first = loadKimiTokenizer({ dir, cacheDir });
    const files = readdirSync(cacheDir).filter((f) => f.startsWith('ranks-'));
    assert.equal(files.length, 1);
    const cacheFile = join(cacheDir, files[0]);
    const cached = decodeRankCache(readFileSync(cacheFile));
    assert.ok(cached, 'the cache decodes');
    assert.equal(cached.offsets.length - 1, 163584);
    const second = loadKimiTokenizer({ dir, cacheDir });
    assert.deepEqual(second.encode('Hello 世界 <|im_end|>'), first.encode('Hello 世界 <|im_end|>'));
    writeFileSync(cacheFile, 'TSRANKS1 but then garbage');
    const third = loadKimiTokenizer({ dir, cacheDir });
    assert.deepEqual(third.encode('Hello 世界'), [19180, 220, 2243]);
    assert.ok(decodeRankCache(readFileSync(cacheFile)), 'the corrupt cache was rewritten');
  });

  test('an unwritable cache dir only costs speed, with a warning', () => {
    const blocker = join(tmp, 'not-a-dir');
    writeFileSync(blocker, 'x');
    const warnings: string[] = [];
    const k = loadKimiTokenizer({ dir, cacheDir: join(blocker, 'cache'), onWarning: (m) => warnings.push(m) });
    assert.deepEqual(k.encode('Hello'), [19180]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /could not write the tokenizer cache/);
  });
});

describe('rank files', () => {
  test('parse and cache round trip, with a gap in the ranks', () => {
    const file = Buffer.from(['YQ== 0', 'Yg== 1', 'YWI= 3', ''].join('\n'));
    const table = parseRankFile(file);
    assert.deepEqual(Array.from(table.offsets), [0, 1, 2, 2, 4]);
    const back = decodeRankCache(encodeRankCache(table))!;
    assert.deepEqual(Array.from(back.offsets), Array.from(table.offsets));
    assert.deepEqual(Buffer.from(back.bytes).toString(), 'abab');
  });

  test('a malformed rank file is a UserError naming the line', () => {
    assert.throws(
      () => parseRankFile(Buffer.from('YQ== 0\nnot a rank line\n')),
      (e: unknown) => {
        assert.ok(e instanceof UserError);
        assert.match(e.message, /line 2/);
        return true;
      },
    );
    assert.throws(() => parseRankFile(Buffer.from('\n\n')), UserError);
  });

  test('missing tokenizer files are UserErrors', () => {
    assert.throws(() => loadKimiTokenizer({ dir: join(tmp, 'nowhere') }), UserError);
  });

  test('special slots without a config are all reserved', () => {
    const s = kimiSpecials(100, undefined);
    assert.equal(s.size, 256);
    assert.equal(s.get('<|reserved_token_100|>'), 100);
    assert.equal(s.get('<|reserved_token_355|>'), 355);
  });
});

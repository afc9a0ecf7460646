// The engines' own parser lists against the family registry (src/core/families/engine-parsers.ts): every family the
// map names is registered, every registered family is named by an engine parser or says why not, every parser is
// mapped or unsupported with a reason, and no (engine, name) is listed twice.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE_PARSERS, PARSER_ENGINES, PARSER_SOURCES, UNNAMED_FAMILIES } from '../../../src/core/families/engine-parsers';
import { families } from '../../../src/core/families/index';
import type { FamilyId } from '../../../src/core/model';
import { familiesMap, formatFamiliesMap } from '../../../src/cli/families-map';

const registered = new Set<string>(families.map((f) => f.id));
const named = (p: (typeof ENGINE_PARSERS)[number]): FamilyId[] => [...(p.family ? [p.family] : []), ...(p.also ?? [])];

describe('engine parser map against the family registry', () => {
  test('every family the map names is registered', () => {
    const missing = ENGINE_PARSERS.flatMap((p) =>
      named(p)
        .filter((id) => !registered.has(id))
        .map((id) => `${p.engine} ${p.name} → ${id}`),
    );
    assert.deepEqual(missing, []);
    const unknownNotes = Object.keys(UNNAMED_FAMILIES).filter((id) => !registered.has(id));
    assert.deepEqual(unknownNotes, [], 'UNNAMED_FAMILIES lists only registered families');
  });

  test('every registered family is named by an engine parser or carries a note why not', () => {
    const covered = new Set(ENGINE_PARSERS.flatMap(named));
    const unexplained = families.map((f) => f.id).filter((id) => !covered.has(id) && !UNNAMED_FAMILIES[id]);
    assert.deepEqual(unexplained, [], 'add an engine parser entry or a UNNAMED_FAMILIES note');
    // A note for a family that a parser does name is stale.
    const stale = (Object.keys(UNNAMED_FAMILIES) as FamilyId[]).filter((id) => covered.has(id));
    assert.deepEqual(stale, [], 'UNNAMED_FAMILIES holds only families no parser names');
    for (const [id, note] of Object.entries(UNNAMED_FAMILIES)) assert.ok(note && note.trim().length > 10, `${id}: a real reason`);
  });

  test('every entry is mapped to one family or unsupported with a one-line reason', () => {
    for (const p of ENGINE_PARSERS) {
      const where = `${p.engine} ${p.name}`;
      assert.ok(PARSER_ENGINES.includes(p.engine), where);
      assert.ok(p.name.trim() === p.name && p.name.length > 0, `${where}: name`);
      assert.ok(p.file.length > 0, `${where}: file`);
      assert.ok((p.family === undefined) !== (p.unsupported === undefined), `${where}: exactly one of family / unsupported`);
      if (p.unsupported !== undefined) {
        assert.ok(p.unsupported.trim().length > 10, `${where}: a reason, not a placeholder`);
        assert.ok(!p.unsupported.includes('\n'), `${where}: one line`);
        assert.equal(p.also, undefined, `${where}: an unsupported parser names no families`);
      }
      if (p.also) assert.ok(p.family !== undefined && !p.also.includes(p.family), `${where}: also lists other families than family`);
    }
  });

  test('a pending entry only waits for a family that has not landed', () => {
    // `pending: the X family …` entries become mappings once X is registered.
    const landed = ENGINE_PARSERS.filter((p) => p.unsupported?.startsWith('pending:')).filter((p) =>
      [...registered].some((id) => p.unsupported!.includes(`the ${id} family`)),
    );
    assert.deepEqual(
      landed.map((p) => `${p.engine} ${p.name}: ${p.unsupported}`),
      [],
    );
  });

  test('no (engine, name) is listed twice', () => {
    const seen = new Map<string, number>();
    for (const p of ENGINE_PARSERS) seen.set(`${p.engine}\u0000${p.name}`, (seen.get(`${p.engine}\u0000${p.name}`) ?? 0) + 1);
    assert.deepEqual(
      [...seen].filter(([, n]) => n > 1).map(([k]) => k.replace('\u0000', ' ')),
      [],
    );
  });

  test('every engine has entries and cites its lists with a commit', () => {
    for (const engine of PARSER_ENGINES) {
      assert.ok(
        ENGINE_PARSERS.some((p) => p.engine === engine),
        engine,
      );
      const { repo, lists } = PARSER_SOURCES[engine];
      assert.match(repo, /^[\w.-]+\/[\w.-]+$/);
      assert.ok(
        lists.some((l) => /^[0-9a-f]{40}$/.test(l.commit)),
        `${engine}: a full commit`,
      );
    }
  });

  test('the names engines are known to register are in the map, with their family', () => {
    const get = (engine: string, name: string) => ENGINE_PARSERS.find((p) => p.engine === engine && p.name === name);
    assert.equal(get('vllm', 'qwen3_coder')?.family, 'qwen3-coder');
    assert.equal(get('vllm', 'openai')?.family, 'gpt-oss');
    assert.equal(get('sglang', 'qwen25')?.family, 'qwen3');
    assert.equal(get('sglang', 'kimi_k2')?.family, 'kimi-k2');
    assert.equal(get('llama.cpp', 'deepseek_v3_2')?.family, 'deepseek-v32');
    assert.deepEqual(get('llama.cpp', 'deepseek_v3_2')?.also, ['deepseek-v4']);
    assert.equal(get('ollama', 'cogito')?.family, 'deepseek-v3');
    assert.equal(get('ollama', 'deepseek3')?.family, 'deepseek-v31');
    assert.equal(get('vllm', 'xlam')?.family, 'xlam');
    assert.equal(get('sglang', 'muse')?.family, 'muse-glimmer');
    assert.equal(get('ollama', 'glimmer')?.family, 'muse-glimmer');
    assert.match(get('sglang', 'nanbeige')?.unsupported ?? '', /not in the stored source/);
    assert.match(get('ollama', 'passthrough')?.unsupported ?? '', /no parsing/);
  });
});

describe('the --families report', () => {
  test('JSON: per engine, counts that add up, display names from the registry', () => {
    const map = familiesMap();
    assert.deepEqual(
      map.engines.map((e) => e.engine),
      [...PARSER_ENGINES],
    );
    for (const e of map.engines) {
      assert.equal(e.mapped + e.unsupported, e.parsers.length, e.engine);
      for (const p of e.parsers) if (p.family) assert.equal(p.familyName, families.find((f) => f.id === p.family)!.format.displayName);
    }
    assert.equal(
      map.engines.reduce((n, e) => n + e.parsers.length, 0),
      ENGINE_PARSERS.length,
    );
  });

  test('text: one line per parser, the family display name or "unsupported: reason"', () => {
    const text = formatFamiliesMap();
    assert.match(text, /^vLLM \(vllm-project\/vllm\): \d+ parsers, \d+ mapped, \d+ unsupported$/m);
    assert.match(text, /^ {2}qwen3_coder +→ Qwen3-Coder XML/m);
    assert.match(text, /^ {2}xlam +→ xLAM \(JSON call list\)/m);
    assert.match(text, /^ {2}passthrough +→ unsupported: no parsing/m);
    assert.match(text, /^ {2}from python\/sglang\/srt\/function_call\/parser_names\.py @ 042de61b/m);
    for (const p of ENGINE_PARSERS) assert.ok(text.includes(`\n  ${p.name} `), p.name);
  });
});

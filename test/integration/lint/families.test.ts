// `tokenscope lint --families`: the engines' parser lists mapped to families, in-process and from the built binary.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { ENGINE_PARSERS, PARSER_ENGINES } from '../../../src/core/families/engine-parsers';
import { repoRoot } from '../../helpers/shared';

async function lint(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['lint', ...argv], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

interface MapJson {
  engines: {
    engine: string;
    name: string;
    parsers: { name: string; family?: string; familyName?: string; unsupported?: string }[];
    mapped: number;
    unsupported: number;
  }[];
  unnamedFamilies: { family: string; note: string }[];
}

describe('lint --families (in-process)', () => {
  test('text: a block per engine, every parser on its own line with its family or the reason', async () => {
    const r = await lint('--families');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, '');
    for (const [engine, name] of [
      ['vLLM', 'vllm-project/vllm'],
      ['SGLang', 'sgl-project/sglang'],
      ['llama.cpp', 'ggml-org/llama.cpp'],
      ['Ollama', 'ollama/ollama'],
    ]) {
      assert.match(r.out, new RegExp(`^${engine.replace('.', '\\.')} \\(${name}\\): \\d+ parsers, \\d+ mapped, \\d+ unsupported$`, 'm'));
    }
    assert.match(r.out, /^ {2}kimi_k2 +→ Kimi K2$/m);
    assert.match(r.out, /^ {2}deepseek_v3_2 +→ DeepSeek V3\.2 \(DSML\) \(also DeepSeek V4 \(DSML\)\)$/m);
    assert.match(r.out, /^ {2}passthrough +→ unsupported: no parsing/m);
    assert.match(r.out, /^ {2}from model\/parsers\/parsers\.go @ [0-9a-f]{40}$/m);
    const lines = r.out.split('\n').filter((l) => / → /.test(l));
    assert.equal(lines.length, ENGINE_PARSERS.length);
  });

  test('--json: the same map as data', async () => {
    const r = await lint('--families', '--json');
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as MapJson;
    assert.deepEqual(
      j.engines.map((e) => e.engine),
      [...PARSER_ENGINES],
    );
    const sglang = j.engines.find((e) => e.engine === 'sglang')!;
    assert.deepEqual(
      sglang.parsers.find((p) => p.name === 'qwen3_coder'),
      {
        name: 'qwen3_coder',
        file: 'python/sglang/srt/function_call/qwen3_coder_detector.py',
        family: 'qwen3-coder',
        familyName: 'Qwen3-Coder XML (Qwen3-Coder, Qwen3.5 / 3.6, MiMo, Step-3.5)',
      },
    );
    for (const e of j.engines) {
      assert.equal(e.mapped + e.unsupported, e.parsers.length);
      for (const p of e.parsers) assert.ok(Boolean(p.family) !== Boolean(p.unsupported), `${e.engine} ${p.name}`);
    }
    assert.equal(
      j.engines.reduce((n, e) => n + e.parsers.length, 0),
      ENGINE_PARSERS.length,
    );
  });

  test('--families takes no FILE: exit 2 with one line', async () => {
    const r = await lint('--families', 'out.txt');
    assert.equal(r.code, 2);
    assert.match(r.err.trim(), /--families .*takes no FILE/);
    assert.equal(r.err.trim().split('\n').length, 1);
  });

  test('--help documents the flag', async () => {
    const r = await lint('--help');
    assert.match(r.out, /--families +print, instead of linting a FILE/);
  });
});

describe('lint --families (built binary)', () => {
  const bin = join(repoRoot, 'bin', 'tokenscope.js');
  const built = join(repoRoot, 'dist', 'cli.js');
  const sources = [
    'src/cli/commands/lint.ts',
    'src/cli/families-map.ts',
    'src/core/families/engine-parsers.ts',
    'src/core/families/index.ts',
  ];
  const fresh = existsSync(built) && sources.every((s) => statSync(built).mtimeMs >= statSync(join(repoRoot, s)).mtimeMs);
  const run = (...argv: string[]) => spawnSync(process.execPath, [bin, 'lint', ...argv], { encoding: 'utf8', timeout: 60_000 });

  test('prints the map as text and as JSON, exit 0', (t) => {
    if (!fresh) return t.skip('dist/cli.js is missing or older than the map sources: run `npm run build` first');
    const text = run('--families');
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^SGLang \(sgl-project\/sglang\): \d+ parsers/m);
    assert.match(text.stdout, /^ {2}openai +→ gpt-oss \(Harmony\)$/m);
    const json = run('--families', '--json');
    assert.equal(json.status, 0, json.stderr);
    const j = JSON.parse(json.stdout) as MapJson;
    assert.equal(
      j.engines.reduce((n, e) => n + e.parsers.length, 0),
      ENGINE_PARSERS.length,
    );
    assert.equal(run('--families', 'x.txt').status, 2);
  });
});

/**
 * `tokenscope lint` on a large raw model output, as a user runs it: the built binary in its own process, on a ~20 MB
 * output (prose with non-ASCII text, then 50 calls, the last cut short) of Kimi K2 (special-token markers) and of
 * Qwen3-Coder (XML), its peak RSS read by a preloaded hook (test/helpers/max-rss.cjs).
 *
 * - The `--json` report is the text `JSON.stringify(report, null, 2)` gives for the report computed in-process, byte
 *   for byte, though the CLI writes it in pieces (src/cli/json-out.ts): once into a pipe the test reads slowly (a
 *   full pipe is waited on, not queued in memory), once into a file.
 * - Peak RSS is at most 5× the input. The text alone takes 1.8× (two bytes per character as soon as one is not
 *   ASCII); decoding it also holds the file's bytes (1×); the rest is Node and the CLI's code (~2.7× of 22 MB). The
 *   allowance: whatever a bare Node process on this machine takes beyond 45 MB (Node 20 on the machine the goal was
 *   set on: 40 MB), so a heavier Node build does not fail the bound. Measured there: 4.6–4.8× (before the report was
 *   streamed and the file read before the code loads: 11.9–13.7×).
 * - The same bound holds for the text report, with the family from the markers (no --family), and with --model.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { analyzeWithContext } from '../../../src/core/analyze';
import { toJson } from '../../../src/cli/commands/lint';
import { loadInput } from '../../../src/cli/input';
import { getFormat } from '../../../src/core/families/index';
import type { AssistantMessage, FamilyId } from '../../../src/core/model';
import { repoRoot } from '../../helpers/shared';

const bin = join(repoRoot, 'bin', 'tokenscope.js');
const built = join(repoRoot, 'dist', 'cli.js');
const boot = join(repoRoot, 'dist', 'cli-boot.js');
const SOURCES = [
  'src/cli/json-out.ts',
  'src/cli/preread.ts',
  'src/cli/boot.ts',
  'src/cli/commands/lint.ts',
  'src/cli/input-head.ts',
  'src/cli/input.ts',
  'src/core/families/shared/text.ts',
];
const fresh = [built, boot].every((b) => existsSync(b) && SOURCES.every((f) => statSync(b).mtimeMs >= statSync(join(repoRoot, f)).mtimeMs));
const skip = fresh ? false : 'dist/cli.js or dist/cli-boot.js is missing or older than the sources: run `npm run build` first';

const SIZE = 20_000_000;
const WORDS = 'The user wants the file read before editing, so I will open src/app.ts — café, 日本語 — and check the handler first. ';
const maxRss = join(repoRoot, 'test', 'helpers', 'max-rss.cjs');

/** A turn of the family about `size` characters long: prose, then 50 calls, cut inside the last. */
function bigOutput(id: FamilyId, size: number): string {
  const content = WORDS.repeat(Math.ceil(size / WORDS.length));
  const toolCalls = Array.from({ length: 50 }, (_, i) => ({
    index: i,
    name: 'read_file',
    arguments: JSON.stringify({ path: `src/file${i}.ts`, offset: i, limit: 40 }),
  }));
  const m: AssistantMessage = { content, toolCalls };
  const r = getFormat(id).render(m);
  const last = r.segments.filter((s) => s.kind === 'call').at(-1)!;
  return r.text.slice(0, last.start + Math.floor((last.end - last.start) / 2));
}

/** Runs the CLI in its own process; stdout into a pipe (read by the test as it comes) or a file. */
function run(args: string[], stdoutFile?: string): { code: number | null; out: Buffer; peak: number } {
  const fd = stdoutFile ? openSync(stdoutFile, 'w') : undefined;
  try {
    const r = spawnSync(process.execPath, ['-r', maxRss, bin, ...args], { stdio: ['ignore', fd ?? 'pipe', 'pipe'], maxBuffer: 1 << 28 });
    const m = /max-rss-kb (\d+)/.exec(r.stderr.toString());
    assert.ok(m, r.stderr.toString().slice(0, 500));
    return { code: r.status, out: stdoutFile ? readFileSync(stdoutFile) : r.stdout, peak: Number(m[1]) * 1024 };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

describe('lint on a 20 MB output: streamed report, bounded memory', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenscope-lint-big-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  // What a bare Node process takes here, beyond the 45 MB the bound leaves it.
  const bare = bareNodePeak();
  const allowance = Math.max(0, bare - 45e6);

  for (const [id, model, via] of [
    ['kimi-k2', 'moonshotai/kimi-k2-0905', 'pipe'],
    ['qwen3-coder', 'qwen/qwen3-coder', 'file'],
  ] as const) {
    test(`${id}: the --json report equals the in-process one, byte for byte; peak RSS ≤ 5× the input`, async (t) => {
      const file = join(dir, `${id}.txt`);
      writeFileSync(file, bigOutput(id, SIZE));
      const bytes = statSync(file).size;
      const bound = 5 * bytes + allowance;

      const r = run(['lint', '--json', '--family', id, file], via === 'file' ? join(dir, `${id}.json`) : undefined);
      assert.equal(r.code, 1, 'the cut call is an error');
      assert.ok(
        r.peak <= bound,
        `peak RSS ${(r.peak / 1e6).toFixed(1)} MB = ${(r.peak / bytes).toFixed(2)}× the ${(bytes / 1e6).toFixed(1)} MB input (bound ${(bound / 1e6).toFixed(1)} MB; bare node ${(bare / 1e6).toFixed(1)} MB)`,
      );
      t.diagnostic(`--json --family ${id}: peak RSS ${(r.peak / bytes).toFixed(2)}× the input (bare node ${(bare / 1e6).toFixed(1)} MB)`);

      const input = await loadInput(file);
      const { analysis, ctx } = analyzeWithContext({ response: input.response, family: id });
      const report = toJson(analysis, ctx);
      const printed = r.out.toString('utf8');
      assert.ok(printed === JSON.stringify(report, null, 2) + '\n', 'the printed report is the text of JSON.stringify(report, null, 2)');
      const parsed = JSON.parse(printed);
      assert.deepEqual(parsed, JSON.parse(JSON.stringify(report)));
      assert.equal(parsed.family, id);
      assert.equal(parsed.calls.length, 50);
      assert.equal(parsed.calls[49].complete, false);
      assert.equal(parsed.content.length, report.content!.length);

      // The text report, the family from the markers, and the family from the model id: the same bound.
      for (const args of [['--family', id], ['--json'], ['--json', '--model', model]]) {
        const o = run(['lint', ...args, file], join(dir, `${id}.out`));
        assert.equal(o.code, 1, args.join(' '));
        assert.ok(
          o.peak <= bound,
          `${args.join(' ')}: peak RSS ${(o.peak / 1e6).toFixed(1)} MB = ${(o.peak / bytes).toFixed(2)}× the input`,
        );
        t.diagnostic(`${args.join(' ')}: peak RSS ${(o.peak / bytes).toFixed(2)}× the input`);
        if (args[0] === '--family') assert.match(o.out.toString('utf8'), /^[^\n]*\(as given\), \d+ errors?/);
        else assert.equal(JSON.parse(o.out.toString('utf8')).family, id, args.join(' '));
      }
    });
  }
});

/** Peak RSS of a Node process that does nothing. */
function bareNodePeak(): number {
  const r = spawnSync(process.execPath, ['-r', maxRss, '-e', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  return Number(/max-rss-kb (\d+)/.exec(r.stderr.toString())?.[1] ?? 0) * 1024;
}

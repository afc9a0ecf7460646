// A model family lives in src/core/families/ only: no file elsewhere under src/ writes a family id as a string (a
// quoted or template literal equal to an id of the registry). Code outside asks the family for a fact instead
// (`getFamily(id).leaks`, `indexedCallIds`, `tokenizer.bundled`…), so a new family is its module and its registry line.
// Comments may name families; the TypeScript parser tells them from strings.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { families } from '../../../src/core/families/index';

const ROOT = join(__dirname, '..', '..', '..');
const SRC = join(ROOT, 'src');
const FAMILIES = join(SRC, 'core', 'families');
const IDS = new Set<string>(families.map((f) => f.id));

/** The string literals of `source` that equal a family id, as `line: 'id'`. */
function quotedIds(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(
    fileName,
    source,
    ts.ScriptTarget.Latest,
    false,
    fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && IDS.has(node.text)) {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      found.push(`${line + 1}: '${node.text}'`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (p !== FAMILIES) sourceFiles(p, out);
    } else if (/\.(ts|tsx|mts|cts|js|mjs|cjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

describe('family ids stay in src/core/families/', () => {
  test('the finder sees a quoted id in code, in a template, in a type, and not in a comment', () => {
    const sample = [
      "// a comment may say 'kimi-k2'",
      "/* or 'gpt-oss' */",
      "const a = 'kimi-k2';",
      'const b = `gpt-oss`;',
      "type C = 'llama4-pythonic';",
      "const d = 'moonshotai/kimi-k2-0905';",
    ].join('\n');
    assert.deepEqual(quotedIds('sample.ts', sample), ["3: 'kimi-k2'", "4: 'gpt-oss'", "5: 'llama4-pythonic'"]);
  });

  test('no source file outside src/core/families/ names a family id', () => {
    const files = sourceFiles(SRC);
    assert.ok(files.length > 100, `read ${files.length} source files under src/`);
    assert.ok(IDS.size >= 50, `the registry lists ${IDS.size} families`);
    const offenders = files.flatMap((f) =>
      quotedIds(f, readFileSync(f, 'utf8')).map((hit) => `${relative(ROOT, f).split(sep).join('/')}:${hit}`),
    );
    assert.deepEqual(offenders, [], 'give the family a fact (families/types.ts) and ask it, instead of naming its id');
  });
});

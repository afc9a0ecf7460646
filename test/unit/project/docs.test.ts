/**
 * The README and docs/ say what the code does: the generated family table and CLI reference are current, every
 * `tokenscope.…` name is a real setting, command, view or span attribute, every relative link resolves, the README
 * stays short, and the README a VSIX carries shows its picture without a repository to fetch it from.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { families } from '../../../src/core/families/index';
import { COMMAND_NAMES } from '../../../src/cli/main';
import { commandHelp, familiesBlock, generatedDocs, ROOT, withBlock } from '../../../scripts/docs';

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const docFiles = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

test('the README is at most 250 lines', () => {
  const lines = read('README.md').split('\n').length;
  assert.ok(lines <= 250, `README.md has ${lines} lines`);
});

test('the README names the VSIX files npm run package writes, one per platform, at this version', () => {
  const { version } = JSON.parse(read('package.json'));
  const readme = read('README.md');
  for (const target of ['linux-x64', 'linux-arm64', 'alpine-x64', 'darwin-x64', 'darwin-arm64', 'win32-x64']) {
    assert.ok(readme.includes(`\`tokenscope-${target}-${version}.vsix\``), `the README does not name tokenscope-${target}-${version}.vsix`);
  }
  assert.match(read('scripts/package.mjs'), /`tokenscope-\$\{target\}-\$\{[^}]*version\}\.vsix`/, 'npm run package names its files so');
});

test('the generated parts of docs/ are current (npm run docs rewrites them)', async () => {
  for (const { path, text } of await generatedDocs()) {
    assert.ok(readFileSync(path, 'utf8') === text, `${path} is out of date: run \`npm run docs\``);
  }
});

test('docs/formats.md lists every registered family by display name and id', () => {
  const doc = read('docs/formats.md');
  assert.ok(families.length >= 50, `${families.length} families`);
  const block = familiesBlock();
  for (const f of families) {
    const row = block.split('\n').find((l) => l.includes(`| \`${f.id}\` |`));
    assert.ok(row, `no row for ${f.id}`);
    assert.ok(doc.includes(row), `docs/formats.md lacks the row of ${f.id} (${f.format.displayName}): run \`npm run docs\``);
    // The display name is in the row, escaped for Markdown only where it must be.
    const shown = row.split(' | ')[0].slice(2).replace(/\\(.)/g, '$1').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    assert.equal(shown, f.format.displayName);
  }
  assert.match(doc, /tokenscope lint --families/, 'the doc says how to see which engine parser reads which family');
});

test('docs/cli.md holds the usage of every command, as its --help prints it', async () => {
  const doc = read('docs/cli.md');
  assert.ok(COMMAND_NAMES.length >= 16);
  for (const name of COMMAND_NAMES) {
    const help = await commandHelp(name);
    const usage = help.split('\n\n')[0];
    assert.match(usage, new RegExp(`^usage: tokenscope ${name} `), name);
    assert.ok(doc.includes(`### ${name}\n`), `docs/cli.md has no section for ${name}`);
    assert.ok(doc.includes(usage), `docs/cli.md lacks the usage of ${name}:\n${usage}`);
  }
});

/** Every `tokenscope.x.y` name a doc gives that is none of the product's (file names like bin/tokenscope.js aside). */
function unknownNames(text: string, known: ReadonlySet<string>): string[] {
  const names = [...text.matchAll(/(?<![\w./-])tokenscope\.([A-Za-z][\w]*(?:\.[A-Za-z][\w]*)*)/g)].map((m) => `tokenscope.${m[1]}`);
  return [...new Set(names)].filter((n) => !known.has(n) && !/^tokenscope\.(js|json|vsix|md)$/.test(n));
}

function knownNames(): Set<string> {
  const pkg = JSON.parse(read('package.json'));
  const c = pkg.contributes;
  const names = [
    ...Object.keys(c.configuration.properties),
    ...c.commands.map((x: { command: string }) => x.command),
    ...Object.values(c.views as Record<string, { id: string }[]>)
      .flat()
      .map((v) => v.id),
    ...c.viewsContainers.activitybar.map((v: { id: string }) => v.id),
    ...c.walkthroughs.map((w: { id: string }) => w.id),
  ];
  // OpenTelemetry span attributes and events (opentelemetry.md lists them).
  for (const m of read('src/core/export/otlp-span.ts').matchAll(/'(tokenscope\.[\w.]+)'/g)) names.push(m[1]);
  return new Set(names);
}

test('every tokenscope.… name in the README and docs/ is a real setting, command, view or span attribute', () => {
  const known = knownNames();
  assert.ok(known.has('tokenscope.tokenizer.folder') && known.has('tokenscope.finding.rule'));
  // The check itself: a setting that does not exist is caught, a file name is not a setting.
  assert.deepEqual(unknownNames('point `tokenscope.tokenizerDir` at it; run bin/tokenscope.js with case.tokenscope.json', known), [
    'tokenscope.tokenizerDir',
  ]);
  for (const file of docFiles)
    assert.deepEqual(unknownNames(read(file), known), [], `${file} names what package.json and the spans do not have`);
});

test('every relative link and image in the README and docs/ resolves to a file of the repository', () => {
  for (const file of docFiles) {
    const text = read(file).replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const link = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('#')) continue;
      const target = normalize(join(ROOT, dirname(file), decodeURI(link.replace(/#.*$/, ''))));
      assert.ok(existsSync(target), `${file}: ${link} does not exist`);
    }
  }
  assert.match(read('README.md'), /!\[[^\]]+\]\(docs\/images\/[\w-]+\.png\)/, 'the README shows a picture');
});

test('the README a VSIX carries inlines its picture, and refuses an image it cannot inline', async () => {
  const { inlineImages } = await import('../../../scripts/vsix-readme.mjs');
  const readme = read('README.md');
  const packed = inlineImages(readme, ROOT);
  assert.doesNotMatch(packed, /!\[[^\]]*\]\((?!data:|https:)/, 'no relative image is left');
  const png = readFileSync(join(ROOT, /!\[[^\]]*\]\((docs\/images\/[^)]+\.png)\)/.exec(readme)![1]));
  assert.ok(packed.includes(`(data:image/png;base64,${png.toString('base64')})`), 'the PNG is inlined byte for byte');
  assert.equal(
    packed.replace(/\(data:image\/png;base64,[^)]+\)/g, '(IMG)'),
    readme.replace(/\(docs\/images\/[^)]+\.png\)/g, '(IMG)'),
    'nothing else changes',
  );
  assert.throws(() => inlineImages('![logo](media/tokenscope.svg)', ROOT), /not PNG, JPEG or GIF/);
  assert.throws(() => inlineImages('![x](docs/images/missing.png)', ROOT), /does not exist/);
  assert.equal(
    inlineImages('![badge](https://example.org/b.png) [docs](docs/cli.md)', ROOT),
    '![badge](https://example.org/b.png) [docs](docs/cli.md)',
  );
});

test('withBlock replaces only the text between its markers, and says when they are missing', () => {
  assert.equal(
    withBlock('a\n<!-- generated:x -->\nold\n<!-- /generated:x -->\nb', 'x', 'new'),
    'a\n<!-- generated:x -->\nnew\n<!-- /generated:x -->\nb',
  );
  assert.throws(() => withBlock('no markers', 'x', 'new'), /no <!-- generated:x -->/);
});

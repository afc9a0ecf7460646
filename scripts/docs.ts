/**
 * The parts of the docs that are generated, so they never fall behind the code:
 * - docs/formats.md, between `<!-- generated:families -->` and `<!-- /generated:families -->`: every registered model
 *   family (src/core/families/index.ts), with its display name, `--family` id, the marker a call opens with, how its
 *   arguments are written and its tokenizer;
 * - docs/cli.md, between `<!-- generated:commands -->` and `<!-- /generated:commands -->`: each command's `--help`.
 *
 *   npm run docs              rewrite them
 *   npm run docs -- --check   exit 1 if either is out of date (test/unit/project/docs.test.ts checks the same)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { defaultDataDir } from '../src/core/capture/ids';
import { families } from '../src/core/families/index';
import { COMMAND_NAMES, main } from '../src/cli/main';

export const ROOT = join(__dirname, '..');

/** Text for a Markdown table cell: HTML and Markdown punctuation escaped, `|` as `\|`. */
function cellText(s: string): string {
  return s.replace(/[\\`*_[\]<>&|]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : `\\${c}`));
}

/** A code span that holds `s` whatever backticks it contains; `|` escaped for a table cell. */
function cellCode(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${s.replace(/\|/g, '\\|')}${pad}${fence}`;
}

/** The families table: one row per registered family, in detection order. */
export function familiesBlock(): string {
  const rows = families.map((f) => {
    const opens = f.repair.openers.length > 0 ? cellCode(f.repair.openers[0]) : 'no marker';
    const args = f.repair.arguments === 'json' ? 'JSON' : 'tagged, typed by the tool schema';
    return `| ${cellText(f.format.displayName)} | \`${f.id}\` | ${opens}${f.format.markerless ? ' (also without a marker)' : ''} | ${args} | \`${f.tokenizer.repo}\` |`;
  });
  return [
    `${families.length} families, in the order their markers are tried when a model id names none.`,
    '',
    '| Family | `--family` | A call opens with | Arguments | Tokenizer (Hugging Face) |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/**
 * One command's `--help`, as the doc shows it: the default data dir as `~/.tokenscope`, the home folder as `~`, the long
 * list of family ids pointed to formats.md (so adding a family does not change this doc).
 */
export async function commandHelp(name: string): Promise<string> {
  let out = '';
  const code = await main([name, '--help'], {
    out: (t) => (out += t.endsWith('\n') ? t : `${t}\n`),
    err: (t) => (out += t.endsWith('\n') ? t : `${t}\n`),
    colour: false,
  });
  if (code !== 0) throw new Error(`tokenscope ${name} --help exited ${code}:\n${out}`);
  // The default data dir as a user without TOKENSCOPE_DATA_DIR sees it, whoever runs this.
  return out
    .replaceAll(defaultDataDir(), '~/.tokenscope')
    .replaceAll(homedir(), '~')
    .replace(/\(((?:[a-z0-9][a-z0-9-]*, ){10,}[a-z0-9][a-z0-9-]*)\)/g, '(an id from formats.md)')
    .trimEnd();
}

/** Every command's help, one section each. */
export async function commandsBlock(): Promise<string> {
  const parts: string[] = [];
  for (const name of COMMAND_NAMES) parts.push(`### ${name}\n\n\`\`\`text\n${await commandHelp(name)}\n\`\`\``);
  return parts.join('\n\n');
}

/** `doc` with the text between its `generated:NAME` markers replaced by `body`. */
export function withBlock(doc: string, name: string, body: string): string {
  const open = `<!-- generated:${name} -->`;
  const close = `<!-- /generated:${name} -->`;
  const a = doc.indexOf(open);
  const b = doc.indexOf(close);
  if (a < 0 || b < a) throw new Error(`the doc has no ${open} … ${close} block`);
  return `${doc.slice(0, a + open.length)}\n${body}\n${doc.slice(b)}`;
}

/** Each generated doc: its path and its text as it should be now. */
export async function generatedDocs(): Promise<{ path: string; text: string }[]> {
  const formats = join(ROOT, 'docs', 'formats.md');
  const cli = join(ROOT, 'docs', 'cli.md');
  return [
    { path: formats, text: withBlock(readFileSync(formats, 'utf8'), 'families', familiesBlock()) },
    { path: cli, text: withBlock(readFileSync(cli, 'utf8'), 'commands', await commandsBlock()) },
  ];
}

async function run(check: boolean): Promise<number> {
  let stale = 0;
  for (const { path, text } of await generatedDocs()) {
    if (readFileSync(path, 'utf8') === text) continue;
    stale++;
    if (check) console.error(`docs: ${path} is out of date: run \`npm run docs\``);
    else {
      writeFileSync(path, text);
      console.log(`docs: rewrote ${path}`);
    }
  }
  if (!check && stale === 0) console.log('docs: up to date');
  return check && stale > 0 ? 1 : 0;
}

if (require.main === module) {
  run(process.argv.includes('--check')).then(
    (code) => process.exit(code),
    (e) => {
      console.error(`docs: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(2);
    },
  );
}

/**
 * The typed contributions table (src/extension/contributions.ts) and package.json's `contributes` say the same thing,
 * checked both ways: every command, menu entry, keybinding, view and setting of the table is in the manifest with the
 * same title, icon, `when`, group and type, and every one of the manifest's is in the table. Links and `when` clauses
 * in the manifest name only known commands, views and context keys. And the code names commands and settings only
 * through the table: no other file of src/extension or webview spells an id.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { DEFAULT_TIMEOUTS } from '../../../src/core/proxy/server';
import { DEFAULT_UPSTREAM_CONNECTIONS, MAX_UPSTREAM_CONNECTIONS } from '../../../src/core/proxy/slots';
import { DEFAULT_CONCURRENCY, DEFAULT_SAMPLES } from '../../../src/core/upstream/compare';
import {
  ALL_COMMANDS,
  CATEGORY,
  Command,
  COMMANDS,
  ContextKey,
  EXTENSION_ID,
  focusViewCommand,
  KEYBINDINGS,
  MENUS,
  SETTINGS,
  settingId,
  View,
  VIEWS,
  type MenuItem,
} from '../../../src/extension/contributions';

const ROOT = join(__dirname, '..', '..', '..');
const manifest = () => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** What `a` has that `b` lacks, as JSON lines (a multiset difference: a duplicate counts). */
function missing(a: unknown[], b: unknown[]): string[] {
  const left = b.map((x) => JSON.stringify(x));
  const out: string[] = [];
  for (const x of a.map((y) => JSON.stringify(y))) {
    const i = left.indexOf(x);
    if (i >= 0) left.splice(i, 1);
    else out.push(x);
  }
  return out;
}

/** Both ways: nothing in the table missing from the manifest, nothing in the manifest missing from the table. */
function sameEntries(what: string, table: unknown[], inManifest: unknown[]): void {
  assert.deepEqual(missing(table, inManifest), [], `${what}: in the table, not in package.json (or different there)`);
  assert.deepEqual(missing(inManifest, table), [], `${what}: in package.json, not in the table (or different there)`);
}

test('every command of the table is in the manifest with its title, category and icon, and no other', () => {
  const m = manifest().contributes.commands as { command: string; title: string; category?: string; icon?: string }[];
  const table = ALL_COMMANDS.map((id) => ({
    command: id,
    title: COMMANDS[id].title,
    category: CATEGORY,
    ...(COMMANDS[id].icon ? { icon: COMMANDS[id].icon } : {}),
  }));
  sameEntries('commands', table, m);
  assert.equal(new Set(m.map((c) => c.command)).size, m.length, 'no command is contributed twice');
  assert.equal(new Set(Object.values(Command)).size, ALL_COMMANDS.length, 'every Command constant has a table entry');
});

test('every menu entry and keybinding of the table is in the manifest with its when and group, and no other', () => {
  const menus = manifest().contributes.menus as Record<string, MenuItem[]>;
  assert.deepEqual(Object.keys(menus).sort(), Object.keys(MENUS).sort(), 'the same menus');
  for (const [id, items] of Object.entries(MENUS)) sameEntries(`menu ${id}`, [...items], menus[id]);
  sameEntries('keybindings', [...KEYBINDINGS], manifest().contributes.keybindings ?? []);
});

test('the views and their container are the table’s', () => {
  const c = manifest().contributes;
  assert.deepEqual(
    c.viewsContainers.activitybar.map((v: { id: string }) => v.id),
    [EXTENSION_ID],
  );
  assert.deepEqual(Object.keys(c.views), [EXTENSION_ID]);
  sameEntries(
    'views',
    Object.entries(VIEWS).map(([id, v]) => ({ id, name: v.name })),
    c.views[EXTENSION_ID].map((v: { id: string; name: string }) => ({ id: v.id, name: v.name })),
  );
});

test('every setting of the table is in the manifest with its type and values, and no other', () => {
  const props = manifest().contributes.configuration.properties as Record<string, { type: string; enum?: string[] }>;
  const table = Object.entries(SETTINGS).map(([key, s]) => ({
    id: settingId(key as keyof typeof SETTINGS),
    type: s.type,
    ...('enum' in s && s.enum ? { enum: [...s.enum] } : {}),
  }));
  const inManifest = Object.entries(props).map(([id, p]) => ({ id, type: p.type, ...(p.enum ? { enum: p.enum } : {}) }));
  sameEntries('settings', table, inManifest);
});

test('the manifest’s defaults and bounds are the ones the code falls back to', () => {
  const props = manifest().contributes.configuration.properties as Record<string, { default: unknown; minimum?: number; maximum?: number }>;
  const p = (key: keyof typeof SETTINGS) => props[settingId(key)];
  assert.equal(p('compare.samples').default, DEFAULT_SAMPLES);
  assert.equal(p('compare.concurrency').default, DEFAULT_CONCURRENCY);
  assert.equal(p('proxy.upstreamConnections').default, DEFAULT_UPSTREAM_CONNECTIONS);
  assert.equal(p('proxy.upstreamConnections').maximum, MAX_UPSTREAM_CONNECTIONS);
  assert.equal(p('proxy.upstreamTimeout').default, DEFAULT_TIMEOUTS.upstreamHeadersMs / 1000);
  assert.equal(p('proxy.idleTimeout').default, DEFAULT_TIMEOUTS.idleMs / 1000);
  assert.equal(p('proxy.headerTimeout').default, DEFAULT_TIMEOUTS.clientHeadersMs / 1000);
});

test('links, completion events and when clauses in the manifest name known commands, views and context keys', () => {
  const c = manifest().contributes;
  const text = JSON.stringify([c.viewsWelcome, c.walkthroughs]);
  const commands = new Set<string>([...ALL_COMMANDS, ...Object.values(View).map(focusViewCommand)]);
  const linked = [...text.matchAll(/(?:command|onCommand):([\w.-]+)/g)].map((m) => m[1]);
  assert.ok(linked.length >= 5, 'the welcome views and the walkthrough link commands');
  assert.deepEqual(
    linked.filter((id) => !commands.has(id)),
    [],
    'links to unknown commands',
  );
  const views = [...text.matchAll(/onView:([\w.-]+)/g)].map((m) => m[1]);
  assert.deepEqual(
    views.filter((v) => !Object.values(View).includes(v as never)),
    [],
    'completion events on unknown views',
  );
  assert.deepEqual(
    c.viewsWelcome.map((w: { view: string }) => w.view).filter((v: string) => !Object.values(View).includes(v as never)),
    [],
    'welcome content for unknown views',
  );
  const whens = Object.values(c.menus as Record<string, MenuItem[]>).flatMap((items) => items.map((i) => i.when ?? ''));
  const known = new Set<string>([...Object.values(ContextKey), ...Object.values(View)]);
  const keys = whens.flatMap((w) => [...w.matchAll(/\btokenscope\.[\w.]+/g)].map((m) => m[0]));
  assert.ok(keys.length > 10);
  assert.deepEqual(
    keys.filter((k) => !known.has(k)),
    [],
    'when clauses use unknown context keys',
  );
});

/** Every string literal (template pieces included) of a TypeScript file, with its line. */
function literals(file: string): { text: string; line: number }[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { text: string; line: number }[] = [];
  const visit = (n: ts.Node): void => {
    if (
      ts.isStringLiteral(n) ||
      ts.isNoSubstitutionTemplateLiteral(n) ||
      ts.isTemplateHead(n) ||
      ts.isTemplateMiddle(n) ||
      ts.isTemplateTail(n)
    ) {
      out.push({ text: n.text, line: src.getLineAndCharacterOfPosition(n.getStart()).line + 1 });
    }
    n.forEachChild(visit);
  };
  visit(src);
  return out;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('the extension and the webviews name commands and settings only through the table', () => {
  const table = join(ROOT, 'src', 'extension', 'contributions.ts');
  const files = [...tsFiles(join(ROOT, 'src', 'extension')), ...tsFiles(join(ROOT, 'webview'))].filter((f) => f !== table);
  assert.ok(files.length > 20);
  const ids = new Set<string>(ALL_COMMANDS);
  const found: string[] = [];
  for (const f of files) {
    for (const l of literals(f)) {
      // A command id anywhere in a literal, or a literal that is an id (`tokenscope.…` used as a key or a command).
      const id =
        [...l.text.matchAll(/\btokenscope\.[\w.]+/g)].map((m) => m[0]).find((t) => ids.has(t)) ??
        (/^tokenscope\.\w/.test(l.text) && !/\.(svg|png|js|css|json)$/.test(l.text) ? l.text : undefined);
      if (id) found.push(`${relative(ROOT, f)}:${l.line}: ${JSON.stringify(id)}`);
    }
    const code = readFileSync(f, 'utf8');
    for (const call of ['getConfiguration(', 'affectsConfiguration(', 'commands.registerCommand(']) {
      if (code.includes(call)) found.push(`${relative(ROOT, f)}: ${call}…) (use the table's accessors)`);
    }
  }
  assert.deepEqual(found, []);
  // The check itself finds a literal id: run on the table, it sees every command.
  const inTable = new Set(literals(table).map((l) => l.text));
  assert.deepEqual(
    ALL_COMMANDS.filter((id) => !inTable.has(id)),
    [],
  );
});

// `tokenscope export` and `tokenscope import` end to end, in-process, on real capture stores in temp folders:
// a capture written the way the proxy writes it → every export format → import into a fresh store → the same
// exchange, bytes, timing and findings. Unusable files change nothing.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../../helpers/cli-main';
import { analyzeExchange } from '../../../src/core/analyze';
import { openStore } from '../../../src/core/capture/store';
import type { CapturedExchange } from '../../../src/core/model';
import { brokenKimiCapture, CANARY, beginRecorded } from '../../fixtures/export/captures';
import { harProblems } from '../../fixtures/export/har12';
import { kimiTokenizerFolder } from '../../helpers/shared';

const root = mkdtempSync(join(tmpdir(), 'tokenscope-export-'));
// Export reads OpenRouter's provider listing when it has a key: these tests stay on loopback whatever the environment holds.
const savedKey = process.env.OPENROUTER_API_KEY;
delete process.env.OPENROUTER_API_KEY;
after(() => {
  rmSync(root, { recursive: true, force: true });
  if (savedKey !== undefined) process.env.OPENROUTER_API_KEY = savedKey;
});
let n = 0;
const fresh = (name: string) => join(root, `${name}-${n++}`);

/** Writes the fixture capture into a store through the writer, exactly as the proxy does, with its chunk timing. */
async function seed(dataDir: string, opts: { secrets?: boolean; startedAt?: number } = {}): Promise<CapturedExchange> {
  const c = brokenKimiCapture({ secrets: opts.secrets, startedAt: opts.startedAt });
  const store = await openStore(dataDir, { analyze: false });
  try {
    const x = c.exchange;
    const w = beginRecorded(store, c);
    w.annotate({ generationId: x.generationId, servedProvider: x.servedProvider });
    return await w.finish({ endedAt: x.endedAt });
  } finally {
    await store.close();
  }
}

async function snapshot(dataDir: string) {
  const store = await openStore(dataDir, { analyze: false });
  try {
    return store.list().map((x) => {
      const res = store.readResponse(x.id)!;
      return {
        x: store.get(x.id)!,
        bytes: res.bytes,
        chunks: res.chunks,
        findings: analyzeExchange(store.get(x.id)!, res.bytes, res.chunks).analysis.findings,
      };
    });
  } finally {
    await store.close();
  }
}

/**
 * What a failed import must leave as it was: the body files (name, size, time) and every stored row, read through a
 * read-only connection. The database's own files are compared by content, not by stat: SQLite may checkpoint its
 * write-ahead log into the main file at any close, which moves bytes between them without changing a row.
 */
async function storeState(dir: string): Promise<{ bodies: string[]; rows: unknown[] }> {
  const store = await openStore(dir, { readOnly: true, analyze: false });
  try {
    const rows = store
      .list()
      .map((x) => ({ x: store.get(x.id), bytes: Buffer.from(store.readResponse(x.id)?.bytes ?? []).toString('base64') }));
    return { bodies: files(dir).filter((f) => !/captures\.db(-wal|-shm)? /.test(f.slice(dir.length))), rows };
  } finally {
    await store.close();
  }
}

/** Every file of a folder with its size and modification time. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => {
      const p = join(d.parentPath, d.name);
      const s = statSync(p);
      return `${p} ${s.size} ${s.mtimeMs}`;
    })
    .sort();
}

/** What must survive a round trip: everything but the ids the new store assigns (and its own summary). */
function comparable(x: CapturedExchange) {
  const { id: _id, sessionId: _session, summary: _summary, ...rest } = x;
  return rest;
}

test('bundle: export → import gives the same exchange, response bytes, chunk timing and findings', async () => {
  const from = fresh('from');
  const to = fresh('to');
  const x = await seed(from);
  const file = join(root, 'repro.tokenscope.json');
  const ex = await cli('export', x.id.slice(0, 9), '--format', 'bundle', '-o', file, '--data-dir', from);
  assert.equal(ex.code, 0, ex.err);
  assert.match(ex.err, /^wrote .*repro\.tokenscope\.json \(\d+ bytes, bundle\)$/m);
  assert.equal(statSync(file).mode & 0o777, 0o600, 'exports are private to the user');

  const im = await cli('import', file, '--data-dir', to);
  assert.equal(im.code, 0, im.err);
  assert.match(im.out, /^imported 1 exchange from .* into /);
  const [a] = await snapshot(from);
  const [b] = await snapshot(to);
  assert.deepEqual(comparable(b.x), comparable(a.x));
  assert.deepEqual(b.bytes, a.bytes);
  assert.deepEqual(b.chunks, a.chunks);
  assert.deepEqual(b.findings, a.findings);
  assert.ok(a.findings.some((f) => f.rule === 'section-unclosed'));
});

test('HAR: a whole session exports, validates as HAR 1.2, and imports back the same', async () => {
  const from = fresh('from');
  const to = fresh('to');
  const t0 = Date.UTC(2026, 10, 30, 2, 0, 0);
  const first = await seed(from, { startedAt: t0 });
  await seed(from, { startedAt: t0 + 20_000 });
  const file = join(root, 'session.har');
  const ex = await cli('export', first.id, '--format', 'har', '--session', '-o', file, '--data-dir', from);
  assert.equal(ex.code, 0, ex.err);
  const har = JSON.parse(readFileSync(file, 'utf8'));
  assert.deepEqual(harProblems(har), []);
  assert.equal(har.log.entries.length, 2);
  const im = await cli('import', file, '--data-dir', to);
  assert.equal(im.code, 0, im.err);
  const a = await snapshot(from);
  const b = await snapshot(to);
  assert.equal(b.length, 2);
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(comparable(b[i].x), comparable(a[i].x));
    assert.deepEqual(b[i].bytes, a[i].bytes);
    assert.deepEqual(b[i].chunks, a[i].chunks);
    assert.deepEqual(b[i].findings, a[i].findings);
  }
});

test('every format through the CLI: output on stdout, secrets gone, --redact patterns applied', async () => {
  const from = fresh('from');
  const x = await seed(from, { secrets: true });
  for (const format of ['bundle', 'markdown', 'curl', 'har', 'k2vv', 'promptfoo']) {
    const r = await cli('export', x.id, '--format', format, '--data-dir', from, '--redact', 'home', '--redact', 'email');
    assert.equal(r.code, 0, `${format}: ${r.err}`);
    assert.ok(r.out.length > 100, format);
    for (const [where, canary] of Object.entries(CANARY)) {
      assert.ok(!r.out.includes(canary), `${format}: the ${where} canary survived`);
      assert.ok(!r.err.includes(canary), `${format}: the ${where} canary reached stderr`);
    }
    assert.match(r.err, /^redacted \(\d+\):/m, format);
  }
  const k2 = await cli('export', x.id, '--format', 'k2vv', '--data-dir', from);
  assert.match(k2.err, /run it with: python tool_calls_eval\.py samples\.jsonl .*--extra-body/);
});

test('--preview lists what would be redacted and writes nothing', async () => {
  const from = fresh('from');
  const x = await seed(from, { secrets: true });
  const out = join(root, 'never.md');
  const r = await cli('export', x.id, '--format', 'markdown', '--preview', '--redact', 'email', '-o', out, '--data-dir', from);
  assert.equal(r.code, 0, r.err);
  // The store redacted headers and key shapes at capture time; the user pattern is what the export adds here.
  assert.match(r.out, /user-pattern:email +request body/);
  assert.ok(!existsSync(out));
});

test('a shared bundle converts to the other formats without a store', async () => {
  const from = fresh('from');
  const x = await seed(from);
  const file = join(root, 'shared.tokenscope.json');
  assert.equal((await cli('export', x.id, '-o', file, '--data-dir', from)).code, 0);
  const md = await cli('export', file, '--format', 'markdown');
  assert.equal(md.code, 0, md.err);
  assert.match(md.out, /⟦missing here: <\|tool_calls_section_end\|>⟧/);
});

test('unusable files: one-line error, exit 2, the store unchanged', async () => {
  const dataDir = fresh('store');
  await seed(dataDir);
  const before = await storeState(dataDir);
  const good = readFileSync(join(root, 'repro.tokenscope.json'), 'utf8');
  const cases: [string, string, RegExp][] = [
    ['truncated.tokenscope.json', good.slice(0, 700), /cannot import .*truncated\.tokenscope\.json: its JSON is cut short or malformed/],
    ['v99.tokenscope.json', JSON.stringify({ ...JSON.parse(good), version: 99 }), /schema version 99; this Tokenscope reads version 1/],
    [
      'empty.har',
      JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [] } }),
      /cannot import .*empty\.har: .*the HAR has no entries/,
    ],
    ['other.json', JSON.stringify({ hello: 'world' }), /neither a HAR .* nor a Tokenscope repro bundle/],
    // Not JSON at all: said in words, the file's bytes are never echoed to the terminal.
    [
      'model.txt',
      'Let me read it.<|tool_calls_section_begin|>',
      /cannot import .*model\.txt: it is not JSON, so neither a HAR nor a Tokenscope repro bundle$/,
    ],
    [
      'program.har',
      '\u007fELF\u0002\u0001\u0001\u0000\u0000',
      /cannot import .*program\.har: it is a binary file, not a HAR or a Tokenscope repro bundle$/,
    ],
  ];
  for (const [name, text, why] of cases) {
    const p = join(root, name);
    writeFileSync(p, text);
    const r = await cli('import', p, '--data-dir', dataDir);
    assert.equal(r.code, 2, name);
    assert.match(r.err, why, name);
    assert.equal(r.err.split('\n').length, 1, `${name}: one line`);
    assert.deepEqual(await storeState(dataDir), before, `${name}: the store is unchanged`);
  }
  const nowhere = fresh('never-created');
  const r = await cli('import', join(root, 'truncated.tokenscope.json'), '--data-dir', nowhere);
  assert.equal(r.code, 2);
  assert.ok(!existsSync(nowhere), 'a failed import does not even create the data folder');
  const missing = await cli('import', join(root, 'no-such.har'), '--data-dir', dataDir);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /cannot read .*no-such\.har: no such file/);
  const folder = await cli('import', root, '--data-dir', dataDir);
  assert.equal(folder.code, 2);
  assert.match(folder.err, /^tokenscope import: cannot read .*: it is a directory\n?$/);
});

test('export errors are one line: unknown id, unknown format, --session without har', async () => {
  const dataDir = fresh('store');
  const x = await seed(dataDir);
  const cases: [string[], RegExp][] = [
    [['export', 'zzzz', '--data-dir', dataDir], /no capture with id "zzzz"/],
    [
      ['export', x.id, '--format', 'pdf', '--data-dir', dataDir],
      /unknown --format "pdf" \(one of: bundle, markdown, curl, har, k2vv, promptfoo\)/,
    ],
    [['export', x.id, '--format', 'markdown', '--session', '--data-dir', dataDir], /only --format har holds/],
    [['export', x.id, '--redact', '(', '--data-dir', dataDir], /not a valid regular expression/],
    // About the user's path, not the temporary file the export is written to first.
    [
      ['export', x.id, '-o', join(root, 'no', 'such', 'dir', 'x.sh'), '--format', 'curl', '--data-dir', dataDir],
      /cannot write .*x\.sh: the folder .*dir does not exist$/,
    ],
    [['export', x.id, '-o', root, '--format', 'curl', '--data-dir', dataDir], /cannot write .*: it is a directory; give a file name$/],
  ];
  for (const [argv, why] of cases) {
    const r = await cli(...argv);
    assert.equal(r.code, 2, argv.join(' '));
    assert.match(r.err, why);
    assert.equal(r.err.split('\n').length, 1);
  }
});

test('with the model tokenizer at hand, the bundle carries the token ids and accounting, the issue a Tokens row', async (t) => {
  const dir = kimiTokenizerFolder();
  if (!existsSync(join(dir, 'tiktoken.model'))) return t.skip(`the Kimi K2 tokenizer is not in ${dir}`);
  const from = fresh('from');
  const x = await seed(from);
  const b = await cli('export', x.id, '--format', 'bundle', '--tokenizer-dir', dir, '--data-dir', from);
  assert.equal(b.code, 0, b.err);
  const bundle = JSON.parse(b.out);
  assert.equal(bundle.tokens.source, 'reconstructed');
  assert.ok(bundle.tokens.ids.length > 20 && bundle.tokens.ids.every(Number.isInteger));
  // The turn ends with Kimi's end-of-turn special token; the leaked markers were text in content, so they are
  // spelled out as ordinary tokens, and no section-end token (163596) is anywhere.
  assert.equal(bundle.tokens.ids.at(-1), 163586);
  assert.ok(!bundle.tokens.ids.includes(163596));
  assert.ok(Number.isInteger(bundle.tokens.accounting.counted));
  assert.equal(bundle.tokens.accounting.billed, 42);
  const md = await cli('export', x.id, '--format', 'markdown', '--tokenizer-dir', dir, '--data-dir', from);
  assert.match(md.out, new RegExp(`\\| Tokens \\| ${bundle.tokens.accounting.counted} completion tokens counted with .*, billed 42`));
});

test('importing a devtools HAR keeps the model call only, and no secret it carried reaches the disk', async () => {
  const dataDir = fresh('store');
  const har = join(__dirname, '..', '..', 'fixtures', 'export', 'devtools-openrouter-sse.har');
  const r = await cli('import', har, '--data-dir', dataDir);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^imported 1 exchange from /);
  assert.match(r.err, /^skipped 2 HAR entries \(not a model API call\)$/);
  for (const f of files(dataDir)) {
    const text = readFileSync(f.split(' ')[0], 'utf8');
    for (const [where, canary] of Object.entries(CANARY)) {
      if (where === 'home') continue; // a path, not a secret: only redacted when the user asks
      assert.ok(!text.includes(canary), `${f}: the ${where} canary was stored`);
    }
  }
  const [imported] = await snapshot(dataDir);
  assert.equal(imported.x.route, 'openrouter');
  assert.ok(imported.findings.some((f) => f.rule === 'section-unclosed'));
});

test('import prints the imported exchanges with control characters from the network escaped', async () => {
  const from = fresh('from');
  const to = fresh('to');
  // The fixture capture, its served provider named with escape sequences (JSON escapes on the wire).
  const c = brokenKimiCapture();
  const body = new TextEncoder().encode(
    new TextDecoder().decode(c.responseBody).replaceAll('"Chutes"', JSON.stringify('Evil\u001b[31mRED\u001b[0m')),
  );
  const store = await openStore(from, { analyze: false });
  let id: string;
  try {
    const x = c.exchange;
    const w = store.begin({
      route: x.route,
      upstreamUrl: x.upstreamUrl,
      method: x.method,
      path: x.path,
      requestHeaders: x.requestHeaders,
      requestBody: x.requestBody,
      agent: x.agent,
      startedAt: x.startedAt,
    });
    w.responseStarted(x.status!, x.responseHeaders!, x.ttfbMs);
    w.chunk(body, 1);
    id = (await w.finish({ endedAt: x.endedAt })).id;
  } finally {
    await store.close();
  }
  const file = join(root, 'evil.tokenscope.json');
  assert.equal((await cli('export', id, '--format', 'bundle', '-o', file, '--data-dir', from)).code, 0);
  const im = await cli('import', file, '--data-dir', to);
  assert.equal(im.code, 0, im.err);
  assert.match(im.out, /via Evil\\e\[31mRED\\e\[0m /);
  assert.ok(!im.out.includes('\u001b'), JSON.stringify(im.out));
});

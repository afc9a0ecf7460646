// A first run with no network: the built CLI (bin/tokenscope.js) in a real process, with an empty HOME (so an empty
// data dir) and the Hugging Face Hub on a closed loopback port, shows Kimi K2 token ids from the tokenizer shipped in
// tokenizers/kimi-k2/, for `tokens --offline`, `tokens` and `tokens --batch`, and opens no connection at all.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../../helpers/shared';

const BIN = join(repoRoot, 'bin', 'tokenscope.js');
const BUILT = join(repoRoot, 'dist', 'cli.js');
const PRELOAD = join(repoRoot, 'test', 'helpers', 'record-connections.cjs');
const fresh =
  existsSync(BUILT) &&
  ['src/core/tokens/resolve.ts', 'src/core/tokens/local.ts'].every((f) => statSync(BUILT).mtimeMs >= statSync(join(repoRoot, f)).mtimeMs);
const SECTION_BEGIN = 163595;
const NATIVE =
  'I will read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a.md"}<|tool_call_end|><|tool_calls_section_end|>';
const COMPLETION = {
  id: 'gen-1',
  object: 'chat.completion',
  model: 'moonshotai/kimi-k2-0905',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `Let me look.${NATIVE.slice(15)}` } }],
};

describe('Kimi K2 tokens on a first run without network (built CLI)', {
  skip: fresh ? false : 'dist/cli.js is missing or older than the tokenizer resolver: run `npm run build` first',
}, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tokenscope-tokens-offline-'));
  const home = join(tmp, 'home');
  const log = join(tmp, 'connections.jsonl');
  let env: NodeJS.ProcessEnv;
  after(() => rmSync(tmp, { recursive: true, force: true }));

  before(async () => {
    mkdirSync(home);
    const port = await new Promise<number>((ok) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(p));
      });
    });
    env = {
      PATH: process.env.PATH,
      HOME: home,
      USERPROFILE: home,
      HF_ENDPOINT: `http://127.0.0.1:${port}`,
      TOKENSCOPE_CONNECTION_LOG: log,
    };
    writeFileSync(join(tmp, 'native.txt'), NATIVE);
    writeFileSync(join(tmp, 'response.json'), JSON.stringify(COMPLETION));
    writeFileSync(join(tmp, 'in.jsonl'), `${JSON.stringify(COMPLETION)}\n`);
  });

  const run = (...argv: string[]) =>
    spawnSync(process.execPath, ['--require', PRELOAD, BIN, 'tokens', ...argv], { cwd: tmp, env, encoding: 'utf8', timeout: 60_000 });
  const connections = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);

  test('tokens --offline prints Kimi ids: <|tool_calls_section_begin|> is 163595', () => {
    const r = run('--offline', '--model', 'moonshotai/kimi-k2-0905', '--json', 'native.txt');
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { tokenizer: string; ids: number[] };
    assert.equal(j.tokenizer, 'moonshotai/Kimi-K2-Instruct-0905 (tiktoken)');
    assert.deepEqual(
      j.ids,
      [40, 748, 2032, 483, 13, 163595, 163597, 41937, 8827, 25, 15, 163598, 8264, 4953, 7471, 64, 6847, 16934, 163599, 163596],
    );
    const text = run('--offline', '--model', 'moonshotai/kimi-k2.5', 'native.txt');
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^native\.txt: 20 tokens, moonshotai\/Kimi-K2\.5 \(tiktoken\)/);
    assert.match(text.stdout, /\[<\|tool_calls_section_begin\|>\]/);
  });

  test('tokens without --offline needs no Hub either for Kimi K2', () => {
    const r = run('--json', 'response.json');
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { tokenizer: string; ids: number[] };
    assert.match(j.tokenizer, /^moonshotai\/Kimi-K2-Instruct-0905/);
    assert.ok(j.ids.includes(SECTION_BEGIN), j.ids.join(','));
  });

  test('tokens --batch --offline writes Kimi ids', () => {
    const r = run('--batch', 'in.jsonl', '--out', 'out.jsonl', '--offline', '--workers', '1');
    assert.equal(r.status, 0, r.stderr);
    const line = JSON.parse(readFileSync(join(tmp, 'out.jsonl'), 'utf8').trim()) as { family: string; completion_ids: number[] };
    assert.equal(line.family, 'kimi-k2');
    assert.ok(line.completion_ids.includes(SECTION_BEGIN), line.completion_ids.join(','));
  });

  test('no connection was opened, and nothing was downloaded into the data dir', () => {
    assert.deepEqual(connections(), []);
    assert.ok(!existsSync(join(home, '.tokenscope', 'tokenizers', 'moonshotai')));
    // The log sees connections: a model Tokenscope does not ship goes to the (closed) Hub, and says so in one line.
    const glm = run('--model', 'z-ai/glm-4.6', 'native.txt');
    assert.equal(glm.status, 2);
    assert.match(
      glm.stderr,
      /cannot reach the Hugging Face Hub at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\) to fetch zai-org\/GLM-4\.6\//,
    );
    assert.equal(connections().length > 0 && connections().every((c) => JSON.parse(c).host === '127.0.0.1'), true, connections().join(' '));
  });
});

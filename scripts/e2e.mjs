// End-to-end test in a real VS Code: code-server (from npm) driven through Debian's Chromium by playwright-core.
//
//   npm run test:e2e            install what is missing, package the .vsix, run test/e2e/*.test.ts
//   node scripts/e2e.mjs --install-only
//
// Everything it installs goes to .cache/e2e/ (git-ignored) and is reused on the next run. It works offline apart
// from the npm registry and Debian's package mirror. Recipe and its snags: ../shared/reference/vscode-e2e.md.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, copyFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(root, '.cache', 'e2e');
const CODE_SERVER_VERSION = '4.100.3';
// @vscode/ripgrep 1.15.11 (pulled by code-server 4.100.3) downloads this archive from GitHub unless it is cached.
const RIPGREP_PKG_VERSION = '1.15.11';
const RIPGREP_ARCHIVE = 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz';

const timings = {};
function timed(name, fn) {
  const t0 = Date.now();
  const r = fn();
  timings[name] = Math.round((Date.now() - t0) / 100) / 10;
  console.log(`e2e: ${name} ${timings[name]}s`);
  return r;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) {
    console.error(`e2e: \`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`})`);
    process.exit(1);
  }
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Chromium (the browser), ripgrep (seeds @vscode/ripgrep), kerberos headers (a native module of code-server). */
function ensureSystemPackages() {
  const missing = [];
  if (!existsSync('/usr/bin/chromium')) missing.push('chromium');
  if (!has('rg')) missing.push('ripgrep');
  if (!existsSync('/usr/include/krb5.h') && !existsSync('/usr/include/krb5/krb5.h')) missing.push('libkrb5-dev');
  if (missing.length === 0) return;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => (sudo.length ? run('sudo', ['apt-get', ...args], { env }) : run('apt-get', args, { env }));
  apt(['update']);
  apt(['install', '-y', '--no-install-recommends', ...missing]);
}

/**
 * The npm settings of the code-server install, all of them set here: the user's ~/.npmrc (and the npm_config_*
 * variables `npm run` exports from it) decide nothing. Native modules (node-pty, kerberos…) compile against the
 * headers of the Node that runs this script when it has them (`<prefix>/include/node`); otherwise node-gyp fetches
 * them from nodejs.org.
 */
function npmEnv() {
  const npmrc = join(cache, 'npmrc');
  const settings = {
    // node-pty's install runs `npx node-gyp`: npm configured with yes=false would cancel it.
    yes: 'true',
    'update-notifier': 'false',
    fund: 'false',
    audit: 'false',
  };
  const prefix = dirname(dirname(process.execPath));
  if (existsSync(join(prefix, 'include', 'node', 'common.gypi'))) settings.nodedir = prefix;
  else console.log(`e2e: no Node headers under ${prefix}/include/node; node-gyp downloads them`);
  writeFileSync(
    npmrc,
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)));
  return { ...env, npm_config_userconfig: npmrc };
}

function codeServerBin() {
  return join(cache, 'code-server', 'node_modules', '.bin', 'code-server');
}

function ensureCodeServer() {
  const dir = join(cache, 'code-server');
  const marker = join(dir, `.installed-${CODE_SERVER_VERSION}`);
  if (existsSync(marker) && existsSync(codeServerBin())) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, name: 'tokenscope-e2e-code-server' }));

  // Seed @vscode/ripgrep's download cache with Debian's rg so its postinstall does not reach GitHub.
  const tmp = join(cache, 'tmp');
  const rgCache = join(tmp, `vscode-ripgrep-cache-${RIPGREP_PKG_VERSION}`);
  mkdirSync(rgCache, { recursive: true });
  const stage = mkdtempSync(join(tmp, 'rg-'));
  copyFileSync(spawnSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).stdout.trim(), join(stage, 'rg'));
  run('tar', ['-czf', join(rgCache, RIPGREP_ARCHIVE), '-C', stage, 'rg']);
  rmSync(stage, { recursive: true, force: true });

  const env = { ...npmEnv(), TMPDIR: tmp };
  const args = ['install', `code-server@${CODE_SERVER_VERSION}`, '--no-save', '--foreground-scripts'];
  // As root, code-server's postinstall refuses to run without unsafe-perm.
  if (process.getuid?.() === 0) args.push('--unsafe-perm');
  run('npm', args, { cwd: dir, env });
  writeFileSync(marker, new Date().toISOString());
}

function packageExtension() {
  // The VSIX of this machine's platform only (`npm run package` alone builds every platform's).
  run('npm', ['run', 'package', '--', '--target', 'current', '-o', 'tokenscope.vsix']);
}

function runTests() {
  const dir = join(root, 'test', 'e2e');
  // `node scripts/e2e.mjs test/e2e/a.test.ts …` runs just those files; no file argument runs them all.
  const chosen = process.argv.slice(2).filter((a) => a.endsWith('.test.ts'));
  const files = chosen.length
    ? chosen
    : readdirSync(dir)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => join('test', 'e2e', f));
  const env = { ...process.env, TOKENSCOPE_CODE_SERVER: codeServerBin(), TOKENSCOPE_VSIX: join(root, 'tokenscope.vsix') };
  // Spec output for people, TAP to a file for the closing count line.
  const tap = join(cache, 'last-run.tap');
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=1',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...files,
    ],
    { stdio: 'inherit', cwd: root, env },
  );
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  const count = (k) => Number(new RegExp(`^# ${k} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { status: r.status ?? 1, passed: count('pass'), failed: count('fail') + count('cancelled'), skipped: count('skipped') };
}

mkdirSync(cache, { recursive: true });
timed('system packages', ensureSystemPackages);
timed('code-server', ensureCodeServer);
if (process.argv.includes('--install-only')) process.exit(0);
timed('package', packageExtension);
const result = timed('tests', runTests);
console.log(`e2e: timings (s) ${JSON.stringify(timings)}`);
console.log(`e2e: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`);
process.exit(result.status !== 0 || result.failed > 0 || result.passed === 0 ? 1 : 0);

// `npm run package`: the production build, then one VSIX per VS Code platform for which the capture database's native
// binding (libsql) publishes a prebuilt binary, each carrying only its own binary:
//
//   npm run package                                          every target → tokenscope-<target>-<version>.vsix
//   npm run package -- --target linux-x64 --target win32-x64 those (also `--target linux-x64,win32-x64`)
//   npm run package -- --target current -o tokenscope.vsix   this machine's, to that file
//   --out-dir DIR                                            where the VSIX files go (default: the repository)
//   --offline                                                no registry: binaries from .cache/package/libsql/ or
//                                                            npm's own cache only; a target without one is skipped
//
// Everything but libsql is bundled into dist/ by esbuild. libsql's JavaScript and its two small dependencies come from
// node_modules; the binary of each target is the registry's @libsql/<platform> package at the installed libsql's
// version (`npm pack`, kept in .cache/package/libsql/, checked against package-lock.json's integrity), so every VSIX can
// be built on any machine. Each VSIX is assembled in a folder of its own (the build, .vscodeignore's selection of the
// repository's files, the Kimi K2 tokenizer and its licence, that one binary) and checked after packaging: its own
// binary and no other, the tokenizer and licence, no source maps. The working tree's dist/ is left alone.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inlineImages } from './vsix-readme.mjs';
import { vsixEntries, vsixRead } from './vsix-list.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * VS Code target → libsql's prebuilt package (libsql's `neon.targets`). libsql also publishes linux-arm-musleabihf,
 * for which VS Code has no target (there is no alpine-armhf).
 */
const TARGETS = {
  'linux-x64': 'linux-x64-gnu',
  'linux-arm64': 'linux-arm64-gnu',
  'linux-armhf': 'linux-arm-gnueabihf',
  'alpine-x64': 'linux-x64-musl',
  'alpine-arm64': 'linux-arm64-musl',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64-msvc',
};
/** What every VSIX must hold besides its binary. */
const REQUIRED = [
  'extension/package.json',
  'extension/dist/extension.js',
  'extension/dist/tokens-worker.js',
  'extension/dist/capture-worker.js',
  'extension/media/webview.js',
  'extension/tokenizers/kimi-k2/tiktoken.model',
  'extension/tokenizers/kimi-k2/tokenizer_config.json',
  'extension/tokenizers/kimi-k2/LICENSE',
  'extension/node_modules/libsql/index.js',
  'extension/node_modules/@neon-rs/load/package.json',
  'extension/node_modules/detect-libc/package.json',
];

function fail(message) {
  console.error(`package: ${message}`);
  process.exit(1);
}

/** This machine's VS Code target, as libsql's loader picks its binary (musl on Alpine). */
function currentTarget() {
  const musl = process.platform === 'linux' && !process.report?.getReport?.()?.header?.glibcVersionRuntime;
  const arch = process.arch === 'arm' ? 'armhf' : process.arch;
  return `${musl ? 'alpine' : process.platform}-${arch}`;
}

function parseArgs(argv) {
  const targets = [];
  let output;
  let outDir = root;
  let offline = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('-')) fail(`${a} needs a value`);
      return v;
    };
    if (a === '--target') targets.push(...value().split(',').filter(Boolean));
    else if (a === '-o' || a === '--out') output = value();
    else if (a === '--out-dir') outDir = resolve(value());
    else if (a === '--offline') offline = true;
    else fail(`unknown argument ${a} (usage: node scripts/package.mjs [--target T]… [-o FILE] [--out-dir DIR])`);
  }
  const chosen = (targets.length ? targets : output ? ['current'] : Object.keys(TARGETS)).map((t) =>
    t === 'current' ? currentTarget() : t,
  );
  for (const t of chosen) if (!TARGETS[t]) fail(`no VSIX for ${t}: libsql has prebuilt binaries for ${Object.keys(TARGETS).join(', ')}`);
  const unique = [...new Set(chosen)];
  if (output && unique.length !== 1) fail('-o names one file: give one --target with it');
  return { targets: unique, output, outDir, offline };
}

/** The installed libsql's version, and the lockfile's integrity for each of its prebuilt packages. */
function libsqlFacts() {
  const version = JSON.parse(readFileSync(join(root, 'node_modules', 'libsql', 'package.json'), 'utf8')).version;
  const lock = existsSync(join(root, 'package-lock.json')) ? JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) : {};
  const integrity = {};
  for (const pkg of Object.values(TARGETS)) {
    const entry = lock.packages?.[`node_modules/@libsql/${pkg}`];
    if (entry?.version === version && entry.integrity) integrity[pkg] = entry.integrity;
  }
  return { version, integrity };
}

/**
 * `@libsql/<pkg>@<version>` from the registry, once into the cache; the path of its tarball. Offline, npm's own cache
 * only: undefined when the tarball is in neither.
 */
function nativeTarball(pkg, version, integrity, offline) {
  const cache = join(root, '.cache', 'package', 'libsql');
  const file = join(cache, `libsql-${pkg}-${version}.tgz`);
  const check = (f) => {
    if (!integrity) return true;
    const [algo, want] = integrity.split('-');
    return createHash(algo).update(readFileSync(f)).digest('base64') === want;
  };
  if (existsSync(file) && check(file)) return file;
  rmSync(file, { force: true });
  // Packed into a folder of this run, then renamed into place: two runs at once never read a partial tarball.
  const tmp = join(cache, `.pack-${process.pid}`);
  mkdirSync(tmp, { recursive: true });
  try {
    try {
      execFileSync('npm', ['pack', `@libsql/${pkg}@${version}`, '--pack-destination', tmp, '--silent', ...(offline ? ['--offline'] : [])], {
        cwd: tmp,
        stdio: ['ignore', 'ignore', offline ? 'ignore' : 'inherit'],
        shell: process.platform === 'win32',
      });
    } catch (e) {
      if (offline) return undefined;
      throw e;
    }
    const packed = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!packed) fail(`npm pack @libsql/${pkg}@${version} wrote no tarball`);
    if (!check(join(tmp, packed))) fail(`@libsql/${pkg}@${version} from the registry does not match package-lock.json's integrity`);
    renameSync(join(tmp, packed), file);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return file;
}

/** libsql and the packages it requires at run time (not its optional platform packages), as installed. */
function runtimePackages() {
  const found = new Map();
  const visit = (name, from) => {
    if (found.has(name)) return;
    // Node's own lookup order (a package's `exports` may hide its package.json from require.resolve).
    const dir = createRequire(join(from, 'package.json'))
      .resolve.paths(name)
      .map((p) => join(p, name))
      .find((d) => existsSync(join(d, 'package.json')));
    if (!dir) fail(`${name} (needed by ${from}) is not installed: run npm ci`);
    const manifest = join(dir, 'package.json');
    found.set(name, dir);
    const deps = JSON.parse(readFileSync(manifest, 'utf8')).dependencies ?? {};
    for (const dep of Object.keys(deps)) visit(dep, dir);
  };
  visit('libsql', root);
  return found;
}

/** The package.json the VSIX carries: the repository's, with only what the VSIX holds as its dependencies. */
function vsixManifest(libsqlVersion) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  delete pkg.devDependencies;
  delete pkg.optionalDependencies;
  delete pkg.overrides;
  pkg.dependencies = { libsql: libsqlVersion };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** Copies `from` into `to`, leaving out nested node_modules (each runtime package is placed at the top level). */
function copyPackage(from, to) {
  cpSync(from, to, { recursive: true, filter: (src) => !src.slice(from.length).split(/[\\/]/).includes('node_modules') });
}

function run() {
  const { targets, output, outDir, offline } = parseArgs(process.argv.slice(2));
  const { version, integrity } = libsqlFacts();
  const started = Date.now();
  const work = join(root, '.cache', 'package', `run-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  try {
    const build = join(work, 'build');
    execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--production', '--out', build], { cwd: root, stdio: 'inherit' });
    const runtime = runtimePackages();
    const readme = inlineImages(readFileSync(join(root, 'README.md'), 'utf8'), root);
    const manifest = vsixManifest(version);
    const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
    const made = [];
    for (const target of targets) {
      const pkg = TARGETS[target];
      const tarball = nativeTarball(pkg, version, integrity[pkg], offline);
      if (!tarball) {
        console.log(
          `package: skipped ${target}: @libsql/${pkg}@${version} is in neither .cache/package/libsql nor npm's cache (--offline)`,
        );
        continue;
      }
      const stage = join(work, target);
      mkdirSync(stage, { recursive: true });
      // The repository's files as they are (stale source maps and all): .vscodeignore decides what goes in.
      for (const f of ['LICENSE', 'CHANGELOG.md', '.vscodeignore']) if (existsSync(join(root, f))) cpSync(join(root, f), join(stage, f));
      for (const d of ['media', 'tokenizers']) cpSync(join(root, d), join(stage, d), { recursive: true });
      writeFileSync(join(stage, 'package.json'), manifest);
      writeFileSync(join(stage, 'README.md'), readme);
      cpSync(build, stage, { recursive: true });
      for (const [name, dir] of runtime) copyPackage(dir, join(stage, 'node_modules', name));
      const native = join(stage, 'node_modules', '@libsql', pkg);
      mkdirSync(native, { recursive: true });
      execFileSync('tar', ['-xzf', tarball, '-C', native, '--strip-components=1'], { stdio: 'inherit' });
      const ignoreFile = join(work, `${target}.vscodeignore`);
      const carried = [...runtime.keys(), `@libsql/${pkg}`];
      writeFileSync(
        ignoreFile,
        `${readFileSync(join(root, '.vscodeignore'), 'utf8')}\n${carried.map((p) => `!node_modules/${p}/**`).join('\n')}\n`,
      );
      const file = output ? resolve(output) : join(outDir, `tokenscope-${target}-${JSON.parse(manifest).version}.vsix`);
      // README links to files of the repository (docs/…) stay relative: the package names no public repository to point them at.
      execFileSync(
        process.execPath,
        [vsce, 'package', '--target', target, '--ignoreFile', ignoreFile, '--no-rewrite-relative-links', '-o', file],
        {
          cwd: stage,
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      if (target === currentTarget()) smokeTest(stage);
      verify(file, target, pkg);
      made.push({ file, target, pkg });
    }
    if (!made.length) fail('no VSIX made');
    for (const m of made)
      console.log(`package: ${m.file} (${m.target}, ${(statSync(m.file).size / 1e6).toFixed(1)} MB) carries @libsql/${m.pkg}`);
    console.log(`package: ${made.length} VSIX in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The staged libsql loads its binary and runs a query here (the target of this machine): its runtime is complete. */
function smokeTest(stage) {
  const script =
    "const D = require(process.argv[1]); const db = new D(':memory:'); if (db.prepare('select 41 + 1 as x').get().x !== 42) process.exit(1);";
  try {
    execFileSync(process.execPath, ['-e', script, join(stage, 'node_modules', 'libsql')], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    fail(
      `the staged libsql does not load here: ${
        String(e.stderr ?? e.message)
          .trim()
          .split('\n')[0]
      }`,
    );
  }
}

/** The VSIX holds its own binary and no other, everything in REQUIRED, no source map, and names its target. */
function verify(file, target, pkg) {
  const names = vsixEntries(file).map((e) => e.name);
  const binary = `extension/node_modules/@libsql/${pkg}/index.node`;
  const missing = [...REQUIRED, binary].filter((n) => !names.includes(n));
  if (missing.length) fail(`${file} lacks ${missing.join(', ')}`);
  const others = [...new Set(names.filter((n) => n.startsWith('extension/node_modules/@libsql/')).map((n) => n.split('/')[3]))].filter(
    (p) => p !== pkg,
  );
  if (others.length) fail(`${file} (${target}) also carries @libsql/${others.join(', @libsql/')}`);
  const maps = names.filter((n) => n.endsWith('.map'));
  if (maps.length) fail(`${file} carries source maps: ${maps.join(', ')}`);
  const vsixManifestXml = vsixRead(file, 'extension.vsixmanifest')?.toString('utf8') ?? '';
  if (!vsixManifestXml.includes(`TargetPlatform="${target}"`)) fail(`${file} is not marked for ${target}`);
}

run();

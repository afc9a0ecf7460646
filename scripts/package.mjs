// `npm run package`: the production build, then a VSIX for this machine's platform (`vsce package --target`) that
// carries the capture database's native binding: libsql, its two small runtime dependencies and the prebuilt
// @libsql/<platform> package. Everything else is bundled into dist/ by esbuild. Fails when the binary is not inside.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv.includes('-o') ? process.argv[process.argv.indexOf('-o') + 1] : 'tokenscope.vsix';

/** musl (Alpine) or glibc, as libsql's own loader decides. */
function libc() {
  if (process.platform !== 'linux') return '';
  const report = process.report?.getReport?.();
  return report?.header?.glibcVersionRuntime ? 'gnu' : 'musl';
}

const { platform, arch } = process;
const musl = libc() === 'musl';
const target = `${musl ? 'alpine' : platform}-${arch}`;
const nativePackage = `@libsql/${platform}-${arch}${platform === 'linux' ? `-${musl ? 'musl' : 'gnu'}` : platform === 'win32' ? '-msvc' : ''}`;
if (!existsSync(join(root, 'node_modules', nativePackage, 'package.json'))) {
  console.error(`package: ${nativePackage} is not installed (npm ci installs the one for this platform); cannot build a ${target} VSIX`);
  process.exit(1);
}

execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--production'], { cwd: root, stdio: 'inherit' });

const runtime = ['libsql', '@neon-rs/load', 'detect-libc', 'libsql/node_modules/detect-libc', nativePackage];
const ignore = readFileSync(join(root, '.vscodeignore'), 'utf8') + runtime.map((p) => `!node_modules/${p}/**\n`).join('');
mkdirSync(join(root, '.cache'), { recursive: true });
const ignoreFile = join(root, '.cache', 'vscodeignore');
writeFileSync(ignoreFile, ignore);
const vsce = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'vsce.cmd' : 'vsce');
execFileSync(vsce, ['package', '--target', target, '--ignoreFile', ignoreFile, '-o', out], { cwd: root, stdio: 'inherit' });

// Zip entry names are stored as plain text: the binary's path must be in the archive.
const vsix = readFileSync(join(root, out));
const binary = readdirNative();
for (const name of [`extension/node_modules/${nativePackage}/${binary}`, 'extension/node_modules/libsql/index.js', 'extension/node_modules/@neon-rs/load/']) {
  if (!vsix.includes(Buffer.from(name))) {
    console.error(`package: ${out} does not hold ${name}`);
    process.exit(1);
  }
}
console.log(`package: ${out} (${target}) carries ${nativePackage}/${binary}`);

function readdirNative() {
  const pkg = JSON.parse(readFileSync(join(root, 'node_modules', nativePackage, 'package.json'), 'utf8'));
  return pkg.main ?? 'index.node';
}

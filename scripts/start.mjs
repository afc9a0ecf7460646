// `npm start`: builds, then runs the capture proxy (`tokenscope serve`) in this process. Arguments after `--` go to
// `serve` (`npm start -- --port 9000 --upstream http://127.0.0.1:30000`); `--no-build` skips the build. It never
// returns: the proxy runs until Ctrl+C, or until `npm start` is stopped.
//
// npm runs a script in a shell, and passes a SIGTERM on only to that shell, which does not pass it on: stopping
// `npm start` used to leave the proxy running, its port taken. So this process stops the proxy, as Ctrl+C would, once
// its parent (that shell) is gone.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
if (!args.includes('--no-build')) {
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit', cwd: root });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.kill(process.pid, 'SIGTERM');
}, 250);
watch.unref();

const bin = join(root, 'bin', 'tokenscope.js');
process.argv = [process.argv[0], bin, 'serve', ...args.filter((a) => a !== '--no-build')];
createRequire(import.meta.url)(bin);

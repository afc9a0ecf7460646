/**
 * How the `tokenscope` binary starts (bin/tokenscope.js runs this small bundle, dist/cli-boot.js, first):
 * 1. `lint` on a large model-text file reads the file before the CLI's code loads (./preread.ts);
 * 2. the CLI's bundle (dist/cli.js, 3.6 MB) is compiled from the V8 code cache the build wrote beside it
 *    (dist/cli.js.cache, scripts/build.mjs), when that cache is of this very file: compiling the bundle from source is
 *    a sixth of a short command's time. A cache V8 does not accept (another Node) costs nothing: V8 compiles the source.
 * Without a cache, the bundle is loaded with `require`, as before.
 */
import { isAscii } from 'node:buffer';
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { preread } from './preread';

/** What dist/cli.js exports that the binary uses. */
export interface Cli {
  runFromProcess(): void;
}

/** The cache file starts with the size and modification time of the bundle it was made from (two float64s). */
export const CACHE_HEADER = 16;

/** Starts the CLI for `argv` (the command line after `tokenscope`): the early read, then the CLI's code. */
export function start(argv: string[], dir = __dirname): Cli {
  preread(argv);
  return loadCli(dir);
}

/** dist/cli.js, compiled from its code cache when there is a valid one. */
export function loadCli(dir: string): Cli {
  const file = join(dir, 'cli.js');
  const cache = codeCache(file);
  if (!cache) return require(file) as Cli;
  const script = new Script(Module.wrap(source(file)), { filename: file, cachedData: cache });
  const m = new Module(file, require.main);
  m.filename = file;
  m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(file));
  require.cache[file] = m;
  (script.runInThisContext() as (...a: unknown[]) => void).call(m.exports, m.exports, createRequire(file), m, file, dirname(file));
  m.loaded = true;
  return m.exports as Cli;
}

/** A script's source; ASCII (the build makes the bundle ASCII) is decoded as the one-byte text it is, at copy speed. */
function source(file: string): string {
  const bytes = readFileSync(file);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/** The V8 code of `file` the build cached, when the cache was made from the file as it is now. */
export function codeCache(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(`${file}.cache`, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = statSync(file);
    const size = fstatSync(fd).size;
    if (size <= CACHE_HEADER) return undefined;
    const data = Buffer.allocUnsafe(size);
    if (readSync(fd, data, 0, size, 0) !== size) return undefined;
    if (data.readDoubleLE(0) !== st.size || data.readDoubleLE(8) !== st.mtimeMs) return undefined;
    return data.subarray(CACHE_HEADER);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

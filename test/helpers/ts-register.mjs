// Loads the TypeScript sources for tests: `node --import ./test/helpers/ts-register.mjs …`.
// `require` of a .ts file goes through tsx's CommonJS hook in this thread. An `import()` of one (the CLI loads its
// commands that way) only needs resolving here; the module itself is then loaded by that same CommonJS hook. This
// skips tsx's full ES-module loader, which costs about half a second at the start of every test process.
import { createRequire, register } from 'node:module';

createRequire(import.meta.url)('tsx/cjs');
register('./ts-hooks.mjs', import.meta.url);

// A test file's process reports to the runner over its stdout, a pipe. With --test-force-exit it exits as soon as its
// last test is done, and Node does not flush a pipe first (nodejs/node#64833): a file's last verdicts could be lost and
// the run still pass (the fuzz file's last 7 tests were, once in a fresh clone). Blocking writes reach the runner first.
if (process.env.NODE_TEST_CONTEXT?.startsWith('child') && /\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? ''))
  process.stdout._handle?.setBlocking?.(true);

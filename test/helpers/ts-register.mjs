// Loads the TypeScript sources for tests: `node --import ./test/helpers/ts-register.mjs …`.
// `require` of a .ts file goes through tsx's CommonJS hook in this thread. An `import()` of one (the CLI loads its
// commands that way) only needs resolving here; the module itself is then loaded by that same CommonJS hook. This
// skips tsx's full ES-module loader, which costs about half a second at the start of every test process.
import { createRequire, register } from 'node:module';

createRequire(import.meta.url)('tsx/cjs');
register('./ts-hooks.mjs', import.meta.url);

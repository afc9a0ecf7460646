import { join } from 'node:path';

/**
 * The arguments a child Node process needs to run the TypeScript sources, the way `npm test` runs the tests
 * (ts-register.mjs): `spawn(process.execPath, [...TS_LOADER, '--eval', code])`.
 */
export const TS_LOADER = ['--import', join(__dirname, 'ts-register.mjs')];

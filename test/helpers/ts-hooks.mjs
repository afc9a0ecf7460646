// Module hooks for ts-register.mjs: an import of a TypeScript file, with or without its extension, is resolved to the
// file and handed to the CommonJS loader (where tsx compiles it).
const TS = /\.[cm]?tsx?$/;

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    const relative = /^(\.{1,2}\/|\/|file:)/.test(specifier);
    if (!relative || (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'ERR_UNSUPPORTED_DIR_IMPORT')) throw e;
    for (const tail of ['.ts', '.tsx', '/index.ts']) {
      try {
        return await next(specifier.replace(/\/$/, '') + tail, context);
      } catch {
        // the next form
      }
    }
    throw e;
  }
}

export async function load(url, context, next) {
  if (url.startsWith('file:') && TS.test(new URL(url).pathname)) return { format: 'commonjs', shortCircuit: true };
  return next(url, context);
}

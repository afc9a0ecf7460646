/** Tokenscope's version, as package.json gives it (a build may define it; the fallback is kept equal by a test). */
declare const __TOKENSCOPE_VERSION__: string | undefined;
export const VERSION = typeof __TOKENSCOPE_VERSION__ === 'string' ? __TOKENSCOPE_VERSION__ : '0.1.0';

// Preloaded into a child process (`node -r …/max-rss.cjs`): writes its peak resident set size to stderr as it exits,
// for tests that bound a command's memory (test/integration/tokens/memory.test.ts).
process.on('exit', () => require('node:fs').writeSync(2, `\nmax-rss-kb ${process.resourceUsage().maxRSS}\n`));

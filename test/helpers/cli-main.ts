/** The CLI's `main` run in this process, what it prints gathered: stdout and stderr lines each joined by newlines. */
import { main } from '../../src/cli/main';

export async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The same, each line printed ending in a newline (`out` is '' when nothing was printed). */
export async function cliLines(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t + '\n'), err: (t) => (err += t + '\n') });
  return { code, out, err };
}

// The last terminal guard on `serve`/`tail` output: 100k lines (exchange lines, and finding lines with Tokenscope's
// colours), lines per second through `terminalGuard`, against the earlier guard (which let any `ESC[…m` through)
// measured in the same run. Goal: ratio (new/old lines per second) ≥ 0.8.
import { findingLine, palette, safeLine, terminalGuard } from '../src/cli/terminal';

const LINES = 100_000;
const ROUNDS = 15;

/** The guard as it was before colour markers: any SGR passed, other control characters escaped. */
function earlierGuard(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (m) =>
    m.length > 1 ? m : `\\u{${m.codePointAt(0)!.toString(16)}}`,
  );
}

export default async () => {
  const on = palette(true);
  const earlierColour = {
    ...on,
    severity: (_s: string, t = _s) => `\u001b[31;1m${t}\u001b[0m`,
    rule: (r: string) => `\u001b[35m${r}\u001b[0m`,
  };
  const finding = {
    severity: 'error' as const,
    rule: 'section-unclosed',
    location: 'content',
    message: 'Kimi K2 tool-call section in content opened by <|tool_calls_section_begin|> at offset 22 is never closed',
  };
  const build = (colour: typeof on | typeof earlierColour) => {
    const lines: string[] = [];
    for (let i = 0; i < LINES; i++) {
      lines.push(
        i % 4 === 3
          ? `    ${findingLine(finding, colour as typeof on)}\n`
          : `16:47:${String(i % 60).padStart(2, '0')}  0mxdi6ywv00d${i}  opencode  ${safeLine(`moonshotai/kimi-k2-0905 via Chutes${i % 97 === 0 ? '\u001b[31m' : ''}`)}  200 stop  3 findings (3 errors)\n`,
      );
    }
    return lines;
  };
  const now = build(on);
  const before = build(earlierColour);
  const run = (lines: string[], guard: (t: string) => string) => {
    const t0 = performance.now();
    let n = 0;
    for (const l of lines) n += guard(l).length;
    const ms = performance.now() - t0;
    if (n === 0) throw new Error('nothing guarded');
    return (lines.length / ms) * 1000;
  };
  // Without colour the guard's output is what it was, byte for byte.
  const plain = build(palette(false));
  for (const l of plain)
    if (terminalGuard(l) !== earlierGuard(l)) throw new Error(`the guard changed an uncoloured line: ${JSON.stringify(l)}`);
  run(now, terminalGuard);
  run(before, earlierGuard);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    b.push(run(before, earlierGuard));
    a.push(run(now, terminalGuard));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  const after = median(a);
  const earlier = median(b);
  return {
    lines: LINES,
    rounds: ROUNDS,
    linesPerSecondEarlier: Math.round(earlier),
    linesPerSecond: Math.round(after),
    ratio: Number((after / earlier).toFixed(3)),
    goal: 'ratio >= 0.8',
  };
};

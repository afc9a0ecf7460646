/** Where a command writes. Tests pass their own to capture output. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
}

export const processIO: CliIO = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n'),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n'),
};

/** A CLI command. Returns the exit code. */
export type Command = (argv: string[], io: CliIO) => Promise<number>;

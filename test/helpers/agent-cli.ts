/**
 * Running a real agent CLI in the tests: spawned with exactly the environment given (no proxy variables from the
 * test's own environment), its stdout and stderr gathered, killed after two minutes. The OpenCode launch (its binary,
 * its throwaway home and the variables that keep it off the user's config) is here once for every test that runs it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { agentRecipe } from '../../src/core/agents/recipes';
import { exited } from '../unit/proxy/local-upstream';
import { repoRoot } from './shared';

/** Runs the CLI in `cwd` with `env` as its whole environment; `out` is stdout and stderr as they came. */
export async function runCli(
  bin: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; out: string }> {
  const child = spawn(bin, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await exited(child);
  clearTimeout(timer);
  return { code, out };
}

/**
 * The OpenCode CLI's own binary package (what `npm i -g opencode-ai` installs for this platform). It is an optional
 * dependency: on platforms other than linux-x64 it is absent, and `openCodeMissing` says so for `t.skip`.
 */
export const openCodeBin = join(repoRoot, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode');

export function openCodeMissing(): string | undefined {
  return existsSync(openCodeBin)
    ? undefined
    : `the OpenCode CLI binary (npm opencode-linux-x64) is not installed on ${process.platform}-${process.arch}`;
}

/**
 * Runs `opencode run PROMPT` launched as the agents recipe says for `proxyUrl`, in the throwaway folder `home` (its
 * HOME, working folder and XDG folders: OpenCode must not touch the user's config or this repository), with
 * OPENROUTER_API_KEY set to `key` and `extraEnv` added.
 */
export async function runOpenCode(opts: {
  proxyUrl: string;
  home: string;
  key: string;
  prompt: string;
  extraEnv?: Record<string, string>;
}) {
  const recipe = agentRecipe('opencode', { proxyUrl: opts.proxyUrl });
  if (recipe.launch.kind !== 'terminal') throw new Error(`OpenCode launches in a terminal, not ${recipe.launch.kind}`);
  const h = opts.home;
  const env = {
    PATH: process.env.PATH ?? '',
    ...recipe.launch.env,
    HOME: h,
    PWD: h,
    XDG_CONFIG_HOME: join(h, '.config'),
    XDG_DATA_HOME: join(h, '.local/share'),
    XDG_CACHE_HOME: join(h, '.cache'),
    XDG_STATE_HOME: join(h, '.local/state'),
    OPENROUTER_API_KEY: opts.key,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    ...opts.extraEnv,
  };
  return runCli(openCodeBin, [...recipe.launch.args, 'run', opts.prompt], env, h);
}

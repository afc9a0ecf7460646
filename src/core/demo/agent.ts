/**
 * Runs a real coding agent, headless, against the demo upstream through the demo proxy: one prompt in a throwaway
 * home and working folder (the agent never sees the user's config, and never touches their files), launched the
 * way the agent recipes (../agents/recipes.ts) say.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { agentRecipe, routeKeyEnv, type AgentId } from '../agents/recipes';
import { DEMO_MODEL, DEMO_ROUTE } from './cases';

export const DEMO_AGENTS = ['opencode', 'claude-code', 'codex'] as const;
export type DemoAgent = (typeof DEMO_AGENTS)[number];

/** What the demo agent is asked: a file read, which a leaked call turns into printed markup instead. */
export const AGENT_PROMPT = 'Read README.md and tell me in one line what it says.';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The agent's executable: on PATH, or (OpenCode) the binary package installed beside Tokenscope; undefined when absent. */
export function findAgent(agent: DemoAgent, env: NodeJS.ProcessEnv = process.env, packageRoots: string[] = []): string | undefined {
  const command = agentRecipe(agent as AgentId, { proxyUrl: 'http://127.0.0.1' }).launch;
  if (command.kind !== 'terminal') return undefined;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const p = join(dir, command.command);
    if (executable(p)) return p;
  }
  if (agent === 'opencode') {
    for (const root of packageRoots) {
      const p = join(root, 'node_modules', `opencode-${process.platform}-${process.arch}`, 'bin', 'opencode');
      if (executable(p)) return p;
    }
  }
  return undefined;
}

/** Whether the demo upstream speaks the agent's wire protocol (it serves OpenAI Chat Completions only). */
export function demoSpeaks(agent: DemoAgent): boolean {
  return agentRecipe(agent as AgentId, { proxyUrl: 'http://127.0.0.1' }).wireApi === 'chat-completions';
}

export interface AgentRun {
  code: number | null;
  /** Everything the agent printed, stdout and stderr interleaved, as received (untrusted text). */
  output: string;
}

/**
 * Runs `bin` as `agent` against the proxy's demo route with one prompt. `signal` stops it (SIGTERM, then SIGKILL);
 * `timeoutMs` does the same after that long (default 3 minutes).
 */
export async function runAgent(
  agent: DemoAgent,
  bin: string,
  proxyUrl: string,
  opts: { signal?: AbortSignal; timeoutMs?: number; onOutput?: (text: string) => void } = {},
): Promise<AgentRun> {
  const recipe = agentRecipe(agent as AgentId, { proxyUrl, route: DEMO_ROUTE, model: DEMO_MODEL });
  if (recipe.launch.kind !== 'terminal') throw new Error(`${recipe.name} is not started from a terminal`);
  const home = mkdtempSync(join(tmpdir(), 'tokenscope-demo-agent-'));
  const work = join(home, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'README.md'), '# Tokenscope demo\n\nThis folder is a throwaway workspace for the Tokenscope demo.\n');
  // The demo upstream takes any key; the agent still wants one in the variable the recipe names.
  const keys = Object.fromEntries([routeKeyEnv(DEMO_ROUTE), ...recipe.launch.secrets.map((s) => s.env)].map((k) => [k, 'tokenscope-demo']));
  const env = {
    PATH: process.env.PATH ?? '',
    ...recipe.launch.env,
    ...keys,
    HOME: home,
    PWD: work,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'),
    // OpenCode would otherwise fetch its model list, plugins and language servers: the demo stays on this machine.
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
    // …and install its plugin package from the npm registry: offline, with the registry on a closed loopback port.
    npm_config_offline: 'true',
    npm_config_registry: 'http://127.0.0.1:9/',
    NO_COLOR: '1',
  };
  const args =
    agent === 'opencode'
      ? [...recipe.launch.args, 'run', AGENT_PROMPT]
      : agent === 'codex'
        ? [...recipe.launch.args, 'exec', AGENT_PROMPT]
        : [...recipe.launch.args, '-p', AGENT_PROMPT];
  try {
    return await new Promise<AgentRun>((resolve, reject) => {
      const child = spawn(bin, args, { env, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const onData = (d: Buffer) => {
        const text = d.toString('utf8');
        output += text;
        opts.onOutput?.(text);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      const stop = () => {
        child.kill('SIGTERM');
        setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 3000).unref();
      };
      const timer = setTimeout(stop, opts.timeoutMs ?? 180_000);
      opts.signal?.addEventListener('abort', stop, { once: true });
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', stop);
        resolve({ code, output });
      });
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * How to start each coding agent through the proxy. Pure data: the extension opens a terminal with `env` and runs
 * `command args`, or shows the settings to copy; the CLI prints the same. Keys never appear here: `secrets` names
 * the variable the agent reads and which key to put in it, and the caller fills it from SecretStorage or its own
 * environment. Facts per agent: shared reference agents.md §2.
 */
import { routePrefix } from '../proxy/routes';

export type AgentId =
  | 'opencode'
  | 'claude-code'
  | 'codex'
  | 'qwen-code'
  | 'continue-cli'
  | 'kilo-cli'
  | 'aider'
  | 'cline'
  | 'roo-code'
  | 'kilo-code'
  | 'continue';
export type WireApi = 'chat-completions' | 'responses' | 'anthropic-messages';

export interface RecipeOptions {
  /** `http://127.0.0.1:<port>` */
  proxyUrl: string;
  /** Proxy route the agent goes through: `openrouter` (default), `sglang`, `anthropic`, `openai`, `default`, or a custom name. */
  route?: string;
  /** Model id as the upstream names it. */
  model?: string;
}

/** An environment variable the agent reads its key from, and the key that belongs in it. */
export interface SecretEnv {
  env: string;
  /** Conventional variable holding that key (`OPENROUTER_API_KEY`…), also the SecretStorage name. */
  key: string;
}

export interface TerminalLaunch {
  kind: 'terminal';
  /** Environment to set (no secrets). */
  env: Record<string, string>;
  /** Variables to fill with keys before launching. */
  secrets: SecretEnv[];
  command: string;
  args: string[];
  /** The same as one POSIX shell line, keys taken from the user's environment. */
  shell: string;
}

export interface SettingsRecipe {
  kind: 'settings';
  /** Where to click, in order. */
  steps: string[];
  /** Field label → value to paste. */
  fields: { label: string; value: string }[];
  /** A file snippet, when the agent is configured by file. */
  snippet?: { file: string; language: 'yaml' | 'json'; text: string };
}

export interface AgentRecipe {
  id: AgentId;
  name: string;
  wireApi: WireApi;
  /** The base URL the agent is given. */
  baseUrl: string;
  launch: TerminalLaunch | SettingsRecipe;
  notes: string[];
}

export const DEFAULT_MODEL = 'moonshotai/kimi-k2-0905';
/** Provider id Tokenscope registers inside agents that name their providers. */
const PROVIDER_ID = 'tokenscope';

const ROUTE_KEYS: Record<string, string> = {
  openrouter: 'OPENROUTER_API_KEY',
  default: 'OPENROUTER_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  sglang: 'SGLANG_API_KEY',
};

/** The key variable a route's upstream expects (`TOKENSCOPE_<NAME>_API_KEY` for custom upstreams). */
export function routeKeyEnv(route: string): string {
  return ROUTE_KEYS[route] ?? `TOKENSCOPE_${route.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`;
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function terminal(env: Record<string, string>, secrets: SecretEnv[], command: string, args: string[]): TerminalLaunch {
  const assignments = [...Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`), ...secrets.map((s) => `${s.env}="$${s.key}"`)];
  return { kind: 'terminal', env, secrets, command, args, shell: [...assignments, command, ...args.map(shellQuote)].join(' ') };
}

/** OpenCode's inline config: an OpenAI-compatible provider whose baseURL is the proxy (agents.md §2.1). */
export function opencodeConfig(baseUrlV1: string, model: string, keyEnv: string): object {
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      [PROVIDER_ID]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Tokenscope',
        options: { baseURL: baseUrlV1, apiKey: `{env:${keyEnv}}` },
        models: { [model]: { name: model } },
      },
    },
    model: `${PROVIDER_ID}/${model}`,
  };
}

export function agentRecipes(opts: RecipeOptions): AgentRecipe[] {
  return AGENT_IDS.map((id) => agentRecipe(id, opts));
}

export const AGENT_IDS: AgentId[] = [
  'opencode',
  'claude-code',
  'codex',
  'qwen-code',
  'continue-cli',
  'kilo-cli',
  'aider',
  'cline',
  'roo-code',
  'kilo-code',
  'continue',
];

export function agentRecipe(id: AgentId, opts: RecipeOptions): AgentRecipe {
  const route = opts.route ?? 'openrouter';
  const base = opts.proxyUrl.replace(/\/+$/, '') + routePrefix(route);
  const v1 = `${base}/v1`;
  const model = opts.model ?? DEFAULT_MODEL;
  const key = routeKeyEnv(route);
  const openAiCompatibleUi = (name: string, where: string): AgentRecipe => ({
    id,
    name,
    wireApi: 'chat-completions',
    baseUrl: v1,
    launch: {
      kind: 'settings',
      steps: [
        `Open ${name} settings (${where})`,
        'API Provider: choose "OpenAI Compatible" (not "OpenAI", which may use the Responses API)',
        'Fill in the fields below and save',
      ],
      fields: [
        { label: 'Base URL', value: v1 },
        { label: 'API Key', value: `your ${key}` },
        { label: 'Model ID', value: model },
      ],
    },
    notes: ['The key goes to the upstream untouched; Tokenscope redacts it from every capture.'],
  });

  switch (id) {
    case 'opencode':
      return {
        id,
        name: 'OpenCode',
        wireApi: 'chat-completions',
        baseUrl: v1,
        launch: terminal({ OPENCODE_CONFIG_CONTENT: JSON.stringify(opencodeConfig(v1, model, key)) }, [], 'opencode', []),
        notes: [
          'OPENCODE_CONFIG_CONTENT overrides your opencode.json files for this terminal only; nothing is edited.',
          `The key is read by OpenCode from ${key} ({env:…} in the inline config).`,
        ],
      };
    case 'claude-code': {
      const direct = route === 'anthropic';
      return {
        id,
        name: 'Claude Code',
        wireApi: 'anthropic-messages',
        baseUrl: base,
        // Without /v1: Claude Code appends /v1/messages itself. A gateway key goes in ANTHROPIC_AUTH_TOKEN (Bearer),
        // and ANTHROPIC_API_KEY must be empty so it does not take over.
        launch: terminal(
          direct ? { ANTHROPIC_BASE_URL: base } : { ANTHROPIC_BASE_URL: base, ANTHROPIC_API_KEY: '' },
          [direct ? { env: 'ANTHROPIC_API_KEY', key } : { env: 'ANTHROPIC_AUTH_TOKEN', key }],
          'claude',
          opts.model ? ['--model', model] : [],
        ),
        notes: [
          '`/status` inside Claude Code shows the base URL in use.',
          'Claude Code speaks Anthropic Messages: the upstream must serve /v1/messages (OpenRouter and Anthropic do).',
        ],
      };
    }
    case 'codex': {
      const p = `model_providers.${PROVIDER_ID}`;
      const args = [
        '-c',
        `model_provider="${PROVIDER_ID}"`,
        '-c',
        `${p}.name="Tokenscope"`,
        '-c',
        `${p}.base_url="${v1}"`,
        '-c',
        `${p}.env_key="${key}"`,
        '-c',
        `${p}.wire_api="responses"`,
        '-m',
        model,
      ];
      return {
        id,
        name: 'Codex CLI',
        wireApi: 'responses',
        baseUrl: v1,
        launch: terminal({}, [], 'codex', args),
        notes: [
          'Codex appends /responses to base_url; the upstream must serve the Responses API.',
          `Codex reads the key from ${key} (env_key).`,
        ],
      };
    }
    case 'qwen-code':
      return {
        id,
        name: 'Qwen Code',
        wireApi: 'chat-completions',
        baseUrl: v1,
        // Qwen Code's OpenAI auth reads these three; --auth-type openai skips its sign-in screen (agents.md §2.10).
        launch: terminal({ OPENAI_BASE_URL: v1, OPENAI_MODEL: model }, [{ env: 'OPENAI_API_KEY', key }], 'qwen', ['--auth-type', 'openai']),
        notes: [
          'Qwen Code honours HTTPS_PROXY/HTTP_PROXY even for 127.0.0.1 (it ignores NO_PROXY): unset them in this terminal.',
          'It sends a second "memory extraction" request per turn; both are captured.',
        ],
      };
    case 'continue-cli': {
      // `cn` reads its models from a config file: the launch writes one (0600, no key in it: Continue fills
      // `secrets.<VAR>` from the environment) and starts `cn` on it. X-Title names the CLI in captures (its
      // User-Agent is a bundled SDK's, `ls/JS`).
      const yaml = [
        'name: Tokenscope',
        'version: 0.0.1',
        'schema: v1',
        'models:',
        `  - name: ${model} via Tokenscope`,
        '    provider: openai',
        `    model: ${model}`,
        `    apiBase: ${v1}`,
        `    apiKey: \${{ secrets.${key} }}`,
        '    capabilities: [tool_use]',
        '    requestOptions:',
        '      headers:',
        '        X-Title: Continue CLI',
        '',
      ].join('\n');
      const script =
        'f="${TMPDIR:-/tmp}/tokenscope-continue-$$.yaml"; (umask 077; printf %s "$TOKENSCOPE_CONTINUE_CONFIG" > "$f") && exec cn --config "$f" "$@"';
      return {
        id,
        name: 'Continue CLI',
        wireApi: 'chat-completions',
        baseUrl: v1,
        launch: terminal({ TOKENSCOPE_CONTINUE_CONFIG: yaml }, [{ env: key, key }], 'sh', ['-c', script, 'cn']),
        notes: [
          'Headless: append `-p "…" --auto` (npm @continuedev/cli).',
          `Continue reads the key from ${key} (\`secrets.${key}\` in its config).`,
        ],
      };
    }
    case 'kilo-cli':
      // The Kilo CLI is built on OpenCode and reads the same inline config from its own variable (verified headless
      // with @kilocode/cli 7.7.7: `kilo run "…"`).
      return {
        id,
        name: 'Kilo CLI',
        wireApi: 'chat-completions',
        baseUrl: v1,
        launch: terminal({ KILO_CONFIG_CONTENT: JSON.stringify(opencodeConfig(v1, model, key)) }, [], 'kilo', []),
        notes: [
          'KILO_CONFIG_CONTENT adds the Tokenscope provider for this terminal only; your kilo.json is not edited.',
          `The key is read by Kilo from ${key} ({env:…} in the inline config). Headless: \`kilo run "…"\` (npm @kilocode/cli).`,
        ],
      };
    case 'aider':
      return {
        id,
        name: 'Aider',
        wireApi: 'chat-completions',
        baseUrl: v1,
        // The base must end in /v1 (Aider appends /chat/completions) and the model needs the openai/ prefix.
        launch: terminal({ OPENAI_API_BASE: v1 }, [{ env: 'OPENAI_API_KEY', key }], 'aider', [
          '--model',
          `openai/${model}`,
          '--no-show-model-warnings',
        ]),
        notes: ['Aider talks through LiteLLM; the openai/ prefix makes it use the base URL as is.'],
      };
    case 'cline':
      return openAiCompatibleUi('Cline', 'the gear icon in the Cline view');
    case 'roo-code':
      return openAiCompatibleUi('Roo Code', 'the gear icon in the Roo Code view');
    case 'kilo-code':
      return openAiCompatibleUi('Kilo Code', 'the gear icon in the Kilo Code view');
    case 'continue': {
      const yaml = [
        'models:',
        `  - name: ${model} via Tokenscope`,
        '    provider: openai',
        `    model: ${model}`,
        `    apiBase: ${v1}`,
        `    apiKey: <your ${key}>`,
        '    capabilities:',
        '      - tool_use',
        '',
      ].join('\n');
      return {
        id,
        name: 'Continue',
        wireApi: 'chat-completions',
        baseUrl: v1,
        launch: {
          kind: 'settings',
          steps: [
            'Open ~/.continue/config.yaml (Continue: "Open Config")',
            'Add the model entry below under `models:`',
            'Pick it in the Continue model selector',
          ],
          fields: [
            { label: 'apiBase', value: v1 },
            { label: 'model', value: model },
          ],
          snippet: { file: '~/.continue/config.yaml', language: 'yaml', text: yaml },
        },
        notes: ['`capabilities: [tool_use]` enables agent mode for a model Continue does not know.'],
      };
    }
  }
}

/** Guesses which coding agent sent a request, from its User-Agent and attribution headers. */
type Headers = Record<string, string | string[] | undefined>;

/** Most specific first: agents embed the SDK they use in the same header. */
const UA_PATTERNS: [RegExp, string][] = [
  [/\bqwen-?code\b/i, 'qwen-code'],
  [/\bgemini-?cli\b/i, 'gemini-cli'],
  [/\bkilo(?:code)?[- ]?cli\b/i, 'kilo-cli'],
  [/\bcline[- ]?cli\b/i, 'cline-cli'],
  [/\bcontinue[- ]?cli\b/i, 'continue-cli'],
  [/\bopencode\b/i, 'opencode'],
  [/\bclaude-cli\b|\bclaude-code\b/i, 'claude-code'],
  [/\bcodex/i, 'codex'],
  [/\baider\b/i, 'aider'],
  [/\bkilo[- ]?code\b/i, 'kilo-code'],
  [/\broo[- ]?code\b/i, 'roo-code'],
  [/\bcline\b/i, 'cline'],
  [/\bcontinue\b/i, 'continue'],
  [/\blitellm\b/i, 'litellm'],
  [/\bai-sdk\//i, 'ai-sdk'],
  [/^OpenAI\/JS\b/i, 'openai-sdk'],
  [/^OpenAI\/Python\b/i, 'openai-python'],
  [/^Anthropic\/JS\b/i, 'anthropic-sdk'],
  [/^Anthropic\/Python\b/i, 'anthropic-python'],
  [/^curl\//i, 'curl'],
];

function first(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/**
 * The Kilo CLI (npm @kilocode/cli, a Bun binary) sends the same attribution headers as the Kilo Code extension
 * (`X-Title: Kilo Code`); its User-Agent tells it apart: `Kilo-Code/7.7.7 ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14`.
 */
const KILO_CLI_UA = /^Kilo-?Code\/\S+ .*\bruntime\/bun\//i;

export function agentFromHeaders(headers: Headers): string | undefined {
  // Attribution headers name the app more reliably than a User-Agent shared with an SDK.
  const title = first(headers['x-title']) || first(headers['x-openrouter-title']);
  const referer = first(headers['http-referer']);
  const ua = first(headers['user-agent']);
  if (KILO_CLI_UA.test(ua)) return 'kilo-cli';
  for (const text of [title, referer, ua]) {
    if (!text) continue;
    for (const [re, name] of UA_PATTERNS) if (re.test(text)) return name;
  }
  if (!ua) return undefined;
  // Unknown client: its product token, so sessions still group by client.
  return /^[A-Za-z0-9._-]+/.exec(ua)?.[0].toLowerCase();
}

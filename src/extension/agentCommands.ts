/** Launch Agent Through Tokenscope… and Copy Agent Configuration Snippet…, over the core's agent recipes. */
import * as vscode from 'vscode';
import { agentRecipes, shellQuote, type AgentRecipe, type TerminalLaunch } from '../core/agents/recipes';
import { recipeClipboard, recipeMarkdown } from './agentText';

/** Fills an agent's key variables from SecretStorage, else from the editor's own environment. Never logged. */
async function secretEnv(
  launch: TerminalLaunch,
  secrets: vscode.SecretStorage,
): Promise<{ env: Record<string, string>; missing: string[] }> {
  const env: Record<string, string> = {};
  const missing: string[] = [];
  for (const s of launch.secrets) {
    const value = (await secrets.get(s.key)) ?? process.env[s.key];
    if (value) env[s.env] = value;
    else missing.push(s.key);
  }
  return { env, missing };
}

export async function launchAgent(proxyUrl: string | undefined, secrets: vscode.SecretStorage): Promise<void> {
  if (!proxyUrl) {
    void vscode.window.showWarningMessage('Tokenscope: the capture proxy is not running (Tokenscope: Start Capture Proxy).');
    return;
  }
  const recipes = agentRecipes({ proxyUrl }).filter((r): r is AgentRecipe & { launch: TerminalLaunch } => r.launch.kind === 'terminal');
  const pick = await vscode.window.showQuickPick(
    recipes.map((r) => ({ label: r.name, description: r.launch.command, detail: r.notes[0], recipe: r })),
    {
      title: 'Launch Agent Through Tokenscope',
      placeHolder: 'Which agent? A terminal opens with its traffic routed through the capture proxy.',
    },
  );
  if (!pick) return;
  const r = pick.recipe;
  const { env: keys, missing } = await secretEnv(r.launch, secrets);
  const terminal = vscode.window.createTerminal({
    name: `${r.name} · Tokenscope`,
    env: { ...r.launch.env, ...keys },
    iconPath: new vscode.ThemeIcon('radio-tower'),
  });
  terminal.show();
  terminal.sendText([r.launch.command, ...r.launch.args.map(shellQuote)].join(' '));
  if (missing.length) {
    void vscode.window.showWarningMessage(
      `Tokenscope: ${missing.join(', ')} is not set; ${r.name} may ask for a key. Store the OpenRouter key with "Tokenscope: Set OpenRouter API Key" or set it in your environment.`,
    );
  }
}

export async function copyAgentSnippet(proxyUrl: string | undefined): Promise<void> {
  if (!proxyUrl) {
    void vscode.window.showWarningMessage('Tokenscope: the capture proxy is not running (Tokenscope: Start Capture Proxy).');
    return;
  }
  const pick = await vscode.window.showQuickPick(
    agentRecipes({ proxyUrl }).map((r) => ({ label: r.name, description: r.baseUrl, recipe: r })),
    { title: 'Copy Agent Configuration Snippet', placeHolder: 'Which agent? Its settings are copied and shown.' },
  );
  if (!pick) return;
  await vscode.env.clipboard.writeText(recipeClipboard(pick.recipe));
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: recipeMarkdown(pick.recipe) });
  await vscode.window.showTextDocument(doc, { preview: true });
  void vscode.window.showInformationMessage(`Tokenscope: ${pick.recipe.name} settings copied to the clipboard.`);
}

/** How an agent recipe (src/core/agents/recipes.ts) reads in the editor. Pure (no `vscode` import). */
import type { AgentRecipe } from '../core/agents/recipes';

/** A Markdown page with the steps, the values to paste and the snippet, for agents configured in their own UI. */
export function recipeMarkdown(r: AgentRecipe): string {
  const lines = [`# ${r.name} through Tokenscope`, '', `Base URL: \`${r.baseUrl}\` (${r.wireApi})`, ''];
  if (r.launch.kind === 'terminal') {
    lines.push('Run in a terminal (keys come from your environment):', '', '```sh', r.launch.shell, '```');
  } else {
    lines.push(...r.launch.steps.map((s, i) => `${i + 1}. ${s}`), '');
    lines.push('| Field | Value |', '| --- | --- |', ...r.launch.fields.map((f) => `| ${f.label} | \`${f.value}\` |`));
    if (r.launch.snippet)
      lines.push('', `\`${r.launch.snippet.file}\`:`, '', '```' + r.launch.snippet.language, r.launch.snippet.text.trimEnd(), '```');
  }
  if (r.notes.length) lines.push('', ...r.notes.map((n) => `- ${n}`));
  return lines.join('\n') + '\n';
}

/** What "copy" puts on the clipboard for an agent: its snippet, else the shell line, else the base URL. */
export function recipeClipboard(r: AgentRecipe): string {
  if (r.launch.kind === 'terminal') return r.launch.shell;
  return r.launch.snippet?.text ?? r.baseUrl;
}

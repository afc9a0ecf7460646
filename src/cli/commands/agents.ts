import { agentRecipes } from '../../core/agents/recipes';
import { DEFAULT_PORT } from '../../core/proxy/server';
import { UserError } from '../../core/model';
import { parseArgs } from '../args';
import type { Command } from '../io';

const HELP = `usage: tokenscope agents [--port N] [--route openrouter|sglang|anthropic|openai|default|NAME] [--model ID] [--json]

Prints the exact way to start each coding agent through the Tokenscope proxy (run \`tokenscope serve\` first).`;

const agents: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['port', 'route', 'model'], booleans: ['json'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const port = args.num('port', DEFAULT_PORT);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new UserError(`--port must be 1–65535, got ${port}`);
  const recipes = agentRecipes({ proxyUrl: `http://127.0.0.1:${port}`, route: args.str('route'), model: args.str('model') });
  if (args.bool('json')) {
    io.out(JSON.stringify(recipes, null, 2));
    return 0;
  }
  for (const r of recipes) {
    io.out(`${r.name}  (${r.wireApi}, base URL ${r.baseUrl})`);
    if (r.launch.kind === 'terminal') {
      io.out(`  ${r.launch.shell}`);
    } else {
      for (const s of r.launch.steps) io.out(`  - ${s}`);
      for (const f of r.launch.fields) io.out(`      ${f.label}: ${f.value}`);
      if (r.launch.snippet) io.out(`  ${r.launch.snippet.file}:\n${r.launch.snippet.text.replace(/^/gm, '    ').trimEnd()}`);
    }
    for (const n of r.notes) io.out(`  note: ${n}`);
    io.out('');
  }
  return 0;
};
export default agents;

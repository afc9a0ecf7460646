import { defaultDataDir } from '../../core/capture/store';
import { findingLine } from '../../core/capture/describe';
import { UserError } from '../../core/model';
import { outcomeJson, outcomeLine } from '../../core/upstream/describe';
import { OpenRouterClient } from '../../core/upstream/openrouter';
import { rerun } from '../../core/upstream/rerun';
import { parseTarget, targetLabel } from '../../core/upstream/run';
import { parseArgs } from '../args';
import { readTextFile, type Command } from '../io';
import { openStoreWithCaptures } from '../store';
import { previewCallLines, previewLine } from '../../core/repair/preview';
import { safeLine } from '../terminal';

const HELP = `usage: tokenscope rerun ID --target TARGET [--data-dir DIR] [--openrouter-url URL] [--chat-template FILE] [--json]

Sends the request of capture ID again and records the answer as a new capture linked to it.
TARGET is one of:
  openrouter:SLUG      one OpenRouter provider, pinned without fallbacks (\`tokenscope compare --list --model M\`)
  openrouter           OpenRouter's own routing
  sglang[:URL]         an SGLang server's /v1/chat/completions (default http://127.0.0.1:30000)
  sglang-native[:URL]  SGLang's /generate from token ids rendered with the model's chat template: exact output ids
The OpenRouter key comes from OPENROUTER_API_KEY.`;

const cmd: Command = async (argv, io) => {
  const args = parseArgs(argv, { values: ['target', 'data-dir', 'openrouter-url', 'chat-template'], booleans: ['json'] });
  if (args.bool('help')) {
    io.out(HELP);
    return 0;
  }
  const [id] = args.positional;
  if (!id) throw new UserError('which capture? `tokenscope rerun ID --target TARGET` (`tokenscope captures` lists them)');
  const spec = args.str('target');
  if (!spec) throw new UserError('where to? pass --target openrouter:SLUG, openrouter, sglang[:URL] or sglang-native[:URL]');
  const target = parseTarget(spec);
  const templateFile = args.str('chat-template');
  const chatTemplate = templateFile ? readTextFile(templateFile) : undefined;
  const dataDir = args.str('data-dir') ?? defaultDataDir();
  const openrouter =
    target.kind === 'openrouter'
      ? new OpenRouterClient({
          baseUrl: args.str('openrouter-url'),
          retry: { onRetry: (r) => io.err(`HTTP ${r.status}: retrying in ${Math.ceil(r.waitMs / 1000)} s`) },
        })
      : undefined;
  const store = await openStoreWithCaptures(dataDir, io, `with id "${id}"`, { analyze: true, readOnly: false });
  try {
    const o = await rerun(store, id, target, { openrouter, sglang: { chatTemplate, cacheDir: dataDir } });
    if (args.bool('json')) io.out(JSON.stringify(outcomeJson(o), null, 2));
    else {
      io.out(`re-ran ${id} on ${targetLabel(target)} → capture ${o.exchangeId}: ${outcomeLine(o)}`);
      for (const f of o.analysis?.findings ?? []) io.out(`  ${findingLine(f)}`);
      if (o.repair) {
        io.out(
          `repair mode (serve --repair) would have delivered: ${safeLine(previewLine(o.repair))}${o.repair.finishReason ? `, finish_reason ${o.repair.finishReason}` : ''}`,
        );
        for (const line of previewCallLines(o.repair)) io.out(`  tool call: ${safeLine(line)}`);
      }
    }
    return o.ok ? 0 : 1;
  } finally {
    await store.close();
  }
};
export default cmd;

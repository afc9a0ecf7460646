import { prepare } from '../src/core/analyze';
import check from '../src/core/checks/unknown-dialect-call';
const tools = [{ name: 'get_weather' }, { name: 'f' }];
const req = { protocol: 'openai-chat' as const, model: 'x/y', tools, messages: [], raw: {} };
const inputs: Record<string, string> = {
  lt: '<'.repeat(200_000),
  callBrace: '<call>{'.repeat(30_000),
  toolBrace: '[TOOL]{'.repeat(30_000),
  listWord: 'calls: ['.repeat(30_000),
  inline: '`a` <call>x{} '.repeat(20_000),
  manyCalls: '<call>{"name":"f","arguments":{}}</call>\n'.repeat(20_000),
  unclosedAttr: '<tool name="f">'.repeat(20_000),
  toolTag: '<f>'.repeat(30_000),
  react: 'Action: f\nAction Input: x\n'.repeat(20_000),
  fences: '```json\n{"a":1}\n```\n'.repeat(20_000),
  prose: 'The quick brown fox <b>jumps</b> over {the} [lazy] dog. '.repeat(20_000),
};
for (const [name, text] of Object.entries(inputs)) {
  for (const request of [undefined, req]) {
    const { ctx } = prepare({ nativeText: text, model: 'some/unknown', request });
    const t0 = performance.now();
    const n = check.run(ctx).length;
    console.log(name, request ? 'tools' : '-', text.length, n, (performance.now() - t0).toFixed(0) + ' ms');
  }
}

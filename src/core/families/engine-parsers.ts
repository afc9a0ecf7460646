/**
 * Coverage against the engines' own parser lists: every tool-call parser name vLLM, SGLang, llama.cpp and Ollama
 * register, and the Tokenscope family that reads the same grammar, or why none does. `tokenscope lint --families`
 * prints it; test/unit/families/coverage.test.ts keeps it and the family registry in step.
 *
 * Where each list was read (public repositories; commits as stored, not necessarily a tagged release):
 *
 * - vLLM (`vllm-project/vllm`), the `--tool-call-parser` names registered with ToolParserManager:
 *   - `vllm/tool_parsers/__init__.py` @ 0064cc9cb1ae57b1308015d48a57462fa27a68f2 (`_TOOL_PARSERS_TO_REGISTER`);
 *   - `vllm/frontend/processing/tool_parsers/__init__.py` @ 761f197523b7a355e0fff3e76d6d2fda81987ad6, the same table
 *     after the move under `vllm/frontend/processing/`; it adds `dots`, `ling3`, `hy_v4` and `muse_glimmer` and lacks
 *     `solar_open2`. The list below is the union of the two.
 *   - names neither table holds but vLLM's own code registers: `k2_horizon` (asserted by
 *     `tests/tool_parsers/test_k2_horizon_tool_parser.py` @ a7a8741f198f694ca0889698ce69a9b94033ef83
 *     `test_tool_parser_registered`), `gigachat35` (`ToolParserManager.get_tool_parser("gigachat35")` in
 *     `tests/tool_parsers/test_gigachat35_tool_parser.py` @ 053521db5e1807004c5e89d03c75b93b3974c7c7) and
 *     `deepseek_v41` (`vllm/tool_parsers/deepseekv41_engine_tool_parser.py` @ a13f7de0435fa7f54eec389557db438d137e20d2,
 *     an engine adapter over `vllm/parser/deepseek_v41.py` @ 6317084ec2a50bae07137dd57bc4ea932a40f149).
 *   - the unified `vllm.parser` package (reasoning and tool calls in one state machine), its parser modules as the
 *     v0.31.0 API reference lists them (docs.vllm.ai/en/v0.31.0/api/vllm/parser/), each read under `vllm/parser/`.
 *     They are reached through the names above (`qwen3_coder` → `vllm.parser.qwen3`…); listed as `vllm.parser.<module>`.
 * - SGLang (`sgl-project/sglang`): `python/sglang/srt/function_call/parser_names.py` @
 *   042de61bf6848a6c9a3b7437b999586fbc06b998 (`TOOL_CALL_PARSER_NAMES`, the `--tool-call-parser` choices, checked by a
 *   unit test against `FunctionCallParser.ToolCallParserEnum` in `function_call_parser.py`).
 * - llama.cpp (`ggml-org/llama.cpp`): `common/chat.h` @ 0232d960fd7e83aad5c36fdac419d1ecb0beed56 (`common_chat_format`:
 *   CONTENT_ONLY, PEG_SIMPLE, PEG_NATIVE; the per-model formats of older releases are gone), and the specialized
 *   template handlers in `common/parsers/parsers.h` and `common/parsers/sources.cmake` @
 *   0ddccd0857c88d448ea0f2345181283dd4c2a3ab (`common_chat_params_init_<name>`, picked by
 *   `common_chat_try_specialized_template` in `common/chat.cpp` from markers in the chat template); any other template
 *   goes to the differential autoparser (`common/chat-auto-parser.h`).
 * - Ollama (`ollama/ollama`): `model/parsers/parsers.go` @ fb30760996871fa9460115c753afd2c60d4ab0f7 (main, = v0.33.0-rc2),
 *   the names `ParserForName` accepts.
 */
import type { FamilyId } from '../model';

export type ParserEngine = 'vllm' | 'sglang' | 'llama.cpp' | 'ollama';

export const PARSER_ENGINES: readonly ParserEngine[] = ['vllm', 'sglang', 'llama.cpp', 'ollama'];

export const PARSER_ENGINE_NAMES: Record<ParserEngine, string> = {
  vllm: 'vLLM',
  sglang: 'SGLang',
  'llama.cpp': 'llama.cpp',
  ollama: 'Ollama',
};

/** Where each engine's list was read: repository, files and commits. */
export const PARSER_SOURCES: Record<
  ParserEngine,
  { repo: string; lists: readonly { path: string; commit: string }[]; notes?: readonly string[] }
> = {
  vllm: {
    repo: 'vllm-project/vllm',
    lists: [
      { path: 'vllm/tool_parsers/__init__.py', commit: '0064cc9cb1ae57b1308015d48a57462fa27a68f2' },
      { path: 'vllm/frontend/processing/tool_parsers/__init__.py', commit: '761f197523b7a355e0fff3e76d6d2fda81987ad6' },
      { path: 'tests/tool_parsers/test_k2_horizon_tool_parser.py', commit: 'a7a8741f198f694ca0889698ce69a9b94033ef83' },
      { path: 'tests/tool_parsers/test_gigachat35_tool_parser.py', commit: '053521db5e1807004c5e89d03c75b93b3974c7c7' },
      { path: 'vllm/tool_parsers/deepseekv41_engine_tool_parser.py', commit: 'a13f7de0435fa7f54eec389557db438d137e20d2' },
    ],
    notes: ['vllm.parser.<module>: the unified parser modules the v0.31.0 API reference lists, each read at the commit in its file'],
  },
  sglang: {
    repo: 'sgl-project/sglang',
    lists: [{ path: 'python/sglang/srt/function_call/parser_names.py', commit: '042de61bf6848a6c9a3b7437b999586fbc06b998' }],
  },
  'llama.cpp': {
    repo: 'ggml-org/llama.cpp',
    lists: [
      { path: 'common/chat.h', commit: '0232d960fd7e83aad5c36fdac419d1ecb0beed56' },
      { path: 'common/parsers/parsers.h', commit: '0ddccd0857c88d448ea0f2345181283dd4c2a3ab' },
      { path: 'common/parsers/sources.cmake', commit: '0ddccd0857c88d448ea0f2345181283dd4c2a3ab' },
    ],
  },
  ollama: { repo: 'ollama/ollama', lists: [{ path: 'model/parsers/parsers.go', commit: 'fb30760996871fa9460115c753afd2c60d4ab0f7' }] },
};

/** One parser an engine registers, and what reads its grammar in Tokenscope. Exactly one of `family`/`unsupported`. */
export interface EngineParser {
  engine: ParserEngine;
  /** The name as the engine spells it (`--tool-call-parser` value, handler name, Ollama parser name). */
  name: string;
  /** The engine's file for it (detector, parser module, handler). */
  file: string;
  /** The family whose grammar this parser reads. */
  family?: FamilyId;
  /** Further families whose grammar the same parser also reads (a handler shared by two dialects). */
  also?: readonly FamilyId[];
  /** Why no family covers it, in one line. */
  unsupported?: string;
  /** What the map rests on when it is not the parser's name alone. */
  note?: string;
}

type Target = FamilyId | { unsupported: string };

/** A parser whose grammar no family reads yet, or that reads none. */
const no = (reason: string): Target => ({ unsupported: reason });

function entry(
  engine: ParserEngine,
  name: string,
  file: string,
  to: Target,
  extra: { note?: string; also?: readonly FamilyId[] } = {},
): EngineParser {
  const base = { engine, name, file, ...(extra.also && { also: extra.also }), ...(extra.note && { note: extra.note }) };
  return typeof to === 'string' ? { ...base, family: to } : { ...base, unsupported: to.unsupported };
}

const V = 'vllm/tool_parsers/';
const vllm = (name: string, file: string, to: Target, extra?: { note?: string; also?: readonly FamilyId[] }) =>
  entry('vllm', name, V + file, to, extra);
const unified = (module: string, commit: string, to: Target, extra?: { note?: string; also?: readonly FamilyId[] }) =>
  entry('vllm', `vllm.parser.${module}`, `vllm/parser/${module}.py @ ${commit}`, to, extra);

const VLLM: EngineParser[] = [
  vllm('apertus', 'apertus_tool_parser.py', 'apertus'),
  vllm('cohere_command3', 'cohere_command_tool_parser.py', 'cohere-command', { note: 'cohere_melody cmd3 filter' }),
  vllm('cohere_command4', 'cohere_command_tool_parser.py', 'cohere-command', { note: 'cohere_melody cmd4 filter' }),
  vllm('deepseek_v3', 'deepseekv3_tool_parser.py', 'deepseek-v3'),
  vllm('deepseek_v31', 'deepseekv31_tool_parser.py', 'deepseek-v31'),
  vllm('deepseek_v32', 'deepseekv32_engine_tool_parser.py', 'deepseek-v32'),
  vllm('deepseek_v4', 'deepseekv4_engine_tool_parser.py', 'deepseek-v4'),
  vllm('deepseek_v41', 'deepseekv41_engine_tool_parser.py', 'deepseek-v41', {
    note: 'in neither stored registry table; the engine adapter is',
  }),
  vllm('dots', 'dots_tool_parser.py', 'dots'),
  vllm('ernie45', 'ernie45_tool_parser.py', 'ernie45', {
    note: 'Hermes <tool_call> JSON after </think>; a reply without calls in <response>…</response>',
  }),
  vllm('functiongemma', 'functiongemma_tool_parser.py', 'functiongemma'),
  vllm('gemma4', 'gemma4_engine_tool_parser.py', 'gemma4'),
  vllm('gigachat3', 'gigachat3_tool_parser.py', 'gigachat3'),
  vllm('gigachat35', 'gigachat35_tool_parser.py', 'gigachat35', { note: 'registered per the test named at the top' }),
  vllm('glm45', 'glm47_moe_tool_parser.py', 'glm45', {
    note: 'GLM-4.5/4.6 models; the table points it at the GLM-4.7 parser, which reads both',
  }),
  vllm('glm47', 'glm47_moe_tool_parser.py', 'glm47'),
  vllm('granite', 'granite_tool_parser.py', 'granite3'),
  vllm('granite-20b-fc', 'granite_20b_fc_tool_parser.py', 'granite-20b-fc', {
    note: 'granite-20b-functioncalling: <function_call> {JSON} repeated, no closer',
  }),
  vllm('granite4', 'granite4_tool_parser.py', 'granite4'),
  vllm('hermes', 'hermes_tool_parser.py', 'hermes'),
  vllm('hunyuan_a13b', 'hunyuan_a13b_tool_parser.py', 'jamba', {
    note: 'Hunyuan-A13B writes <tool_calls>[{"name","arguments"}]</tool_calls>, the Jamba grammar',
  }),
  vllm('hy_v3', 'hy_v3_tool_parser.py', 'hunyuan-v3'),
  vllm('hy_v4', 'hy_v4_tool_parser.py', 'hunyuan'),
  vllm('inkling', 'inkling_tool_parser.py', 'inkling'),
  vllm('internlm', 'internlm2_tool_parser.py', 'internlm'),
  vllm('jamba', 'jamba_tool_parser.py', 'jamba'),
  vllm('k2_horizon', 'k2_horizon_tool_parser.py', 'k2-horizon', { note: 'registered per the test named at the top' }),
  vllm('kimi_k2', 'kimi_k2_tool_parser.py', 'kimi-k2'),
  vllm('kimi_k3', 'kimi_k3_tool_parser.py', 'kimi-k3'),
  vllm('lfm2', 'lfm2_tool_parser.py', 'lfm2'),
  vllm('ling3', 'ling3_tool_parser.py', 'ling3'),
  vllm('llama3_json', 'llama_tool_parser.py', 'llama3-json'),
  vllm('llama4_json', 'llama_tool_parser.py', 'llama3-json'),
  vllm('llama4_pythonic', 'llama4_pythonic_tool_parser.py', 'llama4-pythonic'),
  vllm('longcat', 'longcat_tool_parser.py', 'longcat'),
  vllm('mimo', 'qwen3_engine_tool_parser.py', 'qwen3-coder', { note: 'the table points it at the Qwen3 engine parser (Qwen3-Coder XML)' }),
  vllm('minicpm5', 'minicpm5xml_tool_parser.py', 'minicpm5'),
  vllm('minimax_m2', 'minimax_m2_tool_parser.py', 'minimax-m2'),
  vllm('minimax_m3', 'minimax_m3_tool_parser.py', 'minimax-m3'),
  vllm('mistral', 'mistral_tool_parser.py', 'mistral'),
  vllm('muse_glimmer', 'muse_glimmer_tool_parser.py', 'muse-glimmer'),
  vllm('olmo3', 'olmo3_tool_parser.py', 'olmo3'),
  vllm('openai', 'gptoss_tool_parser.py', 'gpt-oss'),
  vllm('phi4_mini_json', 'phi4mini_tool_parser.py', 'phi4'),
  vllm('poolside_v1', 'poolside_v1_tool_parser.py', 'poolside-v1'),
  vllm('pythonic', 'pythonic_tool_parser.py', 'llama4-pythonic', { note: 'generic pythonic call list' }),
  vllm('qwen3_coder', 'qwen3_engine_tool_parser.py', 'qwen3-coder'),
  vllm('qwen3_xml', 'qwen3_engine_tool_parser.py', 'qwen3-coder'),
  vllm('seed_oss', 'seed_oss_engine_tool_parser.py', 'seed-oss'),
  vllm('solar_open2', 'solar_open2_tool_parser.py', 'solar-open2'),
  vllm('step3', 'step3_tool_parser.py', 'step3'),
  vllm('step3p5', 'step3p5_tool_parser.py', 'qwen3-coder', { note: 'Step-3.5 writes the Qwen3-Coder XML' }),
  vllm('xlam', 'xlam_tool_parser.py', 'xlam', {
    note: 'a JSON list of {name, arguments}: bare, ```json fenced, after [TOOL_CALLS] or in <tool_call>',
  }),
  // The unified vllm.parser modules (v0.31.0 API reference).
  unified('cohere_command', 'b4ea00392cc12984ba1682e00773631bb2ddc0b6', 'cohere-command'),
  unified('deepseek_v32', 'f20a5cb4fb469b9c9eb3b69912c7dd1d63aa855f', 'deepseek-v32'),
  unified('deepseek_v4', 'f20a5cb4fb469b9c9eb3b69912c7dd1d63aa855f', 'deepseek-v4'),
  unified('deepseek_v41', '6317084ec2a50bae07137dd57bc4ea932a40f149', 'deepseek-v41'),
  unified('gemma4', 'f2bd5706c10b51a6f23883c39240d7c465655e33', 'gemma4'),
  unified('glm47_moe', '428b5d3d2ae67b906723ed66dd631649393fc268', 'glm47'),
  unified('granite', '6769e44b7a9039cc52b3e1b8bc632620ee6be3e1', 'granite3'),
  unified('granite_thinking', '9fdf0d9d5d525ad6aed58fa8534dca2e0699a59a', 'granite42', {
    note: 'Granite 4.2 thinking: the Nemotron V3 format, <think> + Qwen3-Coder XML (the qwen3-coder grammar)',
  }),
  unified('harmony', 'd521279482ee0177dbcd605b7ea5a9017f46feae', 'gpt-oss'),
  unified('inkling', 'b861f0c033b6ba51858c9dce66701c233da98cde', 'inkling'),
  unified('kimi_k2', 'd17ed18f9629659385890e91f98ae83edfe5fdeb', 'kimi-k2'),
  unified('kimi_k3', '9dba6309c1fe7b717dd0854989e40c457084658c', 'kimi-k3'),
  unified('ling3', '941832e0dd0d9d02058fcef3a17358729fe9e407', 'ling3'),
  unified('minimax_m2', '4b5c627c23e6690b8987100d1cbf78e34ac14bf9', 'minimax-m2'),
  unified('mistral', 'ce67e592b62c1ae228c1398a6d4e9be150e3ef7c', 'mistral'),
  unified('nemotron_v3', '530459984d08f60884d63212d4b424fdd383ad14', 'qwen3-coder', { note: 'Nemotron 3 writes the Qwen3-Coder XML' }),
  unified('qwen3', 'edfbd4c1a7bf6e32f02cac337512c0fb797f7ce5', 'qwen3-coder', {
    note: 'behind qwen3_coder / qwen3_xml / mimo: the Qwen3-Coder XML',
  }),
  unified('seed_oss', '15a3fd47ef45622a355ab7be62035231891f5e44', 'seed-oss'),
];

const S = 'python/sglang/srt/function_call/';
const sglang = (name: string, file: string, to: Target, extra?: { note?: string; also?: readonly FamilyId[] }) =>
  entry('sglang', name, S + file, to, extra);

const SGLANG: EngineParser[] = [
  sglang('apertus2509', 'apertus2509_detector.py', 'apertus'),
  sglang('cohere_command4', 'cohere_command4_detector.py', 'cohere-command'),
  sglang('deepseekv3', 'deepseekv3_detector.py', 'deepseek-v3'),
  sglang('deepseekv31', 'deepseekv31_detector.py', 'deepseek-v31'),
  sglang('deepseekv32', 'deepseekv32_detector.py', 'deepseek-v32'),
  sglang('deepseekv4', 'deepseekv4_detector.py', 'deepseek-v4'),
  sglang('deepseekv41', 'deepseekv41_detector.py', 'deepseek-v41'),
  sglang('dots', 'dots_detector.py', 'dots'),
  sglang('glm', 'glm4_moe_detector.py', 'glm45'),
  sglang('glm45', 'glm4_moe_detector.py', 'glm45'),
  sglang('glm47', 'glm47_moe_detector.py', 'glm47'),
  sglang('gpt-oss', 'gpt_oss_detector.py', 'gpt-oss'),
  sglang('k2_horizon', 'k2_v3_detector.py', 'k2-horizon'),
  sglang('kimi_k2', 'kimik2_detector.py', 'kimi-k2'),
  sglang('kimi_k3', 'kimik3_detector.py', 'kimi-k3'),
  sglang('lfm2', 'lfm2_detector.py', 'lfm2'),
  sglang('ling3', 'ling3_detector.py', 'ling3'),
  sglang('llama3', 'llama32_detector.py', 'llama3-json'),
  sglang('mimo', 'mimo_detector.py', 'qwen3-coder', {
    note: 'MiMoDetector reads <tool_call><function=…><parameter=…>, the Qwen3-Coder XML',
  }),
  sglang('minicpm5', 'minicpm5_detector.py', 'minicpm5'),
  sglang('mistral', 'mistral_detector.py', 'mistral'),
  sglang('muse', 'muse_glimmer_detector.py', 'muse-glimmer'),
  sglang('poolside_v1', 'poolside_v1_detector.py', 'poolside-v1'),
  sglang('pythonic', 'pythonic_detector.py', 'llama4-pythonic', { note: 'generic pythonic call list' }),
  sglang('qwen', 'qwen25_detector.py', 'qwen3', { note: 'Qwen2.5/Qwen3 Hermes-style <tool_call> JSON' }),
  sglang('qwen25', 'qwen25_detector.py', 'qwen3', { note: 'Qwen2.5/Qwen3 Hermes-style <tool_call> JSON' }),
  sglang('qwen3_coder', 'qwen3_coder_detector.py', 'qwen3-coder'),
  sglang('spark25', 'spark25_detector.py', 'glm47', {
    note: 'Spark25Detector reads <tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>, the GLM-4.7 tags',
  }),
  sglang('step3', 'step3_detector.py', 'step3'),
  sglang('step3p5', 'qwen3_coder_detector.py', 'qwen3-coder', { note: 'ToolCallParserEnum maps it to Qwen3CoderDetector' }),
  sglang('minimax-m2', 'minimax_m2.py', 'minimax-m2'),
  sglang('minimax-m3', 'minimax_m3.py', 'minimax-m3'),
  sglang(
    'nanbeige',
    '(detector not in the stored source)',
    no('unverified: the detector behind this name is not in the stored source (Nanbeige4 writes Hermes-style <tool_call> JSON)'),
  ),
  sglang('trinity', 'trinity_detector.py', 'trinity', { note: 'Qwen25Detector after <think>/</think> are removed' }),
  sglang('interns1', 'internlm_detector.py', 'internlm'),
  sglang('hermes', 'hermes_detector.py', 'hermes'),
  sglang('hunyuan', 'hunyuan_detector.py', 'hunyuan-v3', {
    also: ['hunyuan'],
    note: 'HunyuanDetector reads the HY-v3 form (<tool_sep> after the name); its test also reads the HY-v4 form without it',
  }),
  sglang('gigachat3', 'gigachat3_detector.py', 'gigachat3'),
  sglang('gigachat35', 'gigachat35_detector.py', 'gigachat35'),
  sglang('gemma4', 'gemma4_detector.py', 'gemma4'),
  sglang('inkling', 'inkling_detector.py', 'inkling'),
  sglang('iquest_q1', 'iquest_q1_detector.py', 'iquest-q1', {
    note: 'GLM-4.7 <arg_key>/<arg_value> pairs inside <iquest_tool_call>…</iquest_tool_call>',
  }),
];

const L = 'common/parsers/';
const llama = (name: string, file: string, to: Target, extra?: { note?: string; also?: readonly FamilyId[] }) =>
  entry('llama.cpp', name, file, to, extra);

const LLAMA_CPP: EngineParser[] = [
  llama('CONTENT_ONLY', 'common/chat.h', no('no tool calls: the whole output is content')),
  llama('PEG_SIMPLE', 'common/chat.h', no('a parser kind, not a grammar: a specialized handler or the autoparser supplies the grammar')),
  llama('PEG_NATIVE', 'common/chat.h', no('a parser kind, not a grammar: a specialized handler or the autoparser supplies the grammar')),
  llama(
    'autoparser',
    'common/chat-auto-parser.h',
    no('generic: infers the markers from the chat template, so it reads whatever dialect the template writes'),
  ),
  llama('cohere2moe', L + 'cohere2moe.cpp', 'cohere-command', { note: '<|START_TEXT|> content, <|START_ACTION|> JSON calls' }),
  llama('deepseek_v3_2', L + 'deepseek.cpp', 'deepseek-v32', {
    also: ['deepseek-v4'],
    note: 'one DSML handler for V3.2 (function_calls) and V4 (tool_calls)',
  }),
  llama('functionary_v3_2', L + 'functionary-v3-2.cpp', 'functionary-v32'),
  llama('gemma4', L + 'gemma4.cpp', 'gemma4'),
  llama('gigachat35', L + 'gigachat35.cpp', 'gigachat35'),
  llama('gigachat_v3', L + 'gigachat-v3.cpp', 'gigachat3'),
  llama('gpt_oss', L + 'gpt-oss.cpp', 'gpt-oss'),
  llama('kimi_k2', L + 'kimi-k2.cpp', 'kimi-k2'),
  llama('kimi_k3', L + 'kimi-k3.cpp', 'kimi-k3'),
  llama('ling3', L + 'ling3.cpp', 'ling3'),
  llama('lfm2', L + 'lfm2.cpp', 'lfm2', { note: 'LFM2 and LFM2.5 templates' }),
  llama('minicpm5', L + 'minicpm5.cpp', 'minicpm5', {
    note: '<function name="NAME"><param name="K">V</param></function>, CDATA values, <think>',
  }),
  llama('minimax_m3', L + 'minimax-m3.cpp', 'minimax-m3'),
  llama('ministral_3', L + 'ministral3.cpp', 'mistral', { note: '[THINK]…[/THINK] then [TOOL_CALLS]NAME[ARGS]{JSON}' }),
  llama('muse_glimmer', L + 'muse-glimmer.cpp', 'muse-glimmer'),
  llama('qwen3_coder', L + 'qwen3-coder.cpp', 'qwen3-coder', { note: 'also Nemotron Nano 3, Qwen3.5 and Step-3.5 templates' }),
];

const O = 'model/parsers/';
const ollama = (name: string, file: string, to: Target, extra?: { note?: string; also?: readonly FamilyId[] }) =>
  entry('ollama', name, O + file, to, extra);

const OLLAMA: EngineParser[] = [
  ollama('qwen3', 'qwen3.go', 'qwen3'),
  ollama('qwen3-thinking', 'qwen3.go', 'qwen3'),
  ollama('qwen3.5', 'qwen35.go', 'qwen3-coder', { note: 'Qwen35Parser hands tool calls to Qwen3CoderParser' }),
  ollama('ornith', 'qwen35.go', 'qwen3-coder', { note: 'Qwen35Parser' }),
  ollama('qwen3-coder', 'qwen3coder.go', 'qwen3-coder'),
  ollama('qwen3-vl-instruct', 'qwen3vl.go', 'qwen3', { note: '<tool_call> JSON' }),
  ollama('qwen3-vl-thinking', 'qwen3vl.go', 'qwen3', { note: '<tool_call> JSON' }),
  ollama('ministral', 'ministral.go', 'mistral', { note: '[TOOL_CALLS]NAME[ARGS]{JSON}, [THINK]…[/THINK]' }),
  ollama('passthrough', 'parsers.go', no('no parsing: the text is passed through and no tool calls are read')),
  ollama('harmony', 'parsers.go', 'gpt-oss', { note: 'harmony.NewHarmonyMessageHandler' }),
  ollama('cogito', 'cogito.go', 'deepseek-v3', { note: 'function<｜tool▁sep｜>NAME\\n```json…```, the DeepSeek V3 calls' }),
  ollama('deepseek3', 'deepseek3.go', 'deepseek-v31', { note: 'NAME<｜tool▁sep｜>{JSON}, the DeepSeek V3.1 calls' }),
  ollama('olmo3', 'olmo3.go', 'olmo3'),
  ollama('olmo3-think', 'olmo3_think.go', no('reasoning only: Olmo3ThinkParser reads no tool calls (HasToolSupport is false)')),
  ollama('nemotron-3-nano', 'nemotron3nano.go', 'qwen3-coder', { note: 'tool calls go to Qwen3CoderParser' }),
  ollama('nemotron-3.5-nano', 'nemotron3nano.go', 'qwen3-coder', { note: 'tool calls go to Qwen3CoderParser' }),
  ollama('functiongemma', 'functiongemma.go', 'functiongemma'),
  ollama('glm-4.7', 'glm47.go', 'glm47', { note: 'GLM47Parser extends the GLM-4.6 parser' }),
  ollama('gemma4', 'gemma4.go', 'gemma4'),
  ollama('gemma4-no-thinking', 'gemma4.go', 'gemma4'),
  ollama('glm-ocr', 'glmocr.go', 'glm45', { note: 'the GLM-4.6 parser with thinking off' }),
  ollama('lfm2', 'lfm2.go', 'lfm2'),
  ollama('lfm2-thinking', 'lfm2.go', 'lfm2'),
  ollama('laguna', 'laguna.go', 'poolside-v1', {
    note: 'poolside Laguna: <tool_call>NAME<arg_key>…</arg_key><arg_value>…</arg_value></tool_call>',
  }),
  ollama('poolside-v1', 'laguna.go', 'poolside-v1', { note: 'LagunaV8Parser' }),
  ollama('cohere', 'cohere.go', 'cohere-command', {
    note: 'Cohere North / Command A 2026: <|START_TEXT|>, <|START_ACTION|>[…]<|END_ACTION|>',
  }),
  ollama('glimmer', 'glimmer.go', 'muse-glimmer'),
];

/** Every parser name of the four engines, with the family that reads it or why none does. */
export const ENGINE_PARSERS: readonly EngineParser[] = [...VLLM, ...SGLANG, ...LLAMA_CPP, ...OLLAMA];

/**
 * Families no engine parser above names, and why they are still worth having. Every registered family is either named
 * by an entry (`family` or `also`) or listed here.
 */
export const UNNAMED_FAMILIES: Partial<Record<FamilyId, string>> = {
  'glm53-flash':
    'GLM-5.3-Flash: SGLang has glm53_flash_detector.py and its test but registers no name for it in parser_names.py; the GLM-4.7 parsers (glm47) read only its tag form, never the JSON form <tool_call>NAME>{…}',
  nemotron:
    'Nemotron (DeciLM) <TOOLCALL>[…]</TOOLCALL>: none of the four engines registers a parser for it; Dynamo reads it (nemotron_deci)',
  'functionary-v31':
    'Functionary v3.1 <function=NAME>{JSON}</function>: llama.cpp read it with a handler of its own (tests/test-chat.cpp, meetkai-functionary-medium-v3.1.jinja) that its current list no longer holds; MeetKai serves it with its own server',
  reka: 'Reka Flash / Edge <tool_call> JSON with <reasoning> or <think>: no engine names a Reka parser; llama.cpp reads Reka Edge through its autoparser (tests/test-chat.cpp "Reka Edge"), the others with their hermes parsers',
};
